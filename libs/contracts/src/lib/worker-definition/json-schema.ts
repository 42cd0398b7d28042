import { z } from 'zod';
import { APPROVAL_STRICTNESS } from './approval-rules';
import { TOOL_NAMES } from './known-tools';
import { WorkerDefinitionSchema } from './schema';

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; items?: JsonSchema };

/**
 * JSON Schema (draft 2020-12) of a worker definition as written, for a model asked to draft one
 * through structured output. It states the shape; the validator still decides (resource forms,
 * cron expressions and cross-field rules are its alone).
 */
export function workerDefinitionJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(WorkerDefinitionSchema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const properties = schema.properties ?? {};
  properties['apiVersion'] = { type: 'string', const: 'packetagent/v1' };
  properties['model'] = {
    description: 'A preset, or a provider and one of its models',
    anyOf: [
      { type: 'object', properties: { preset: { type: 'string', enum: ['default', 'fast', 'local'] } }, required: ['preset'], additionalProperties: false },
      { type: 'object', properties: { provider: { type: 'string', enum: ['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local'] }, model: { type: 'string' } }, required: ['provider', 'model'], additionalProperties: false },
    ],
  };
  const grant = properties['tools']?.items;
  if (grant?.properties) {
    grant.properties['tool'] = { type: 'string', enum: [...TOOL_NAMES] };
    grant.properties['approval'] = { type: 'string', enum: [...APPROVAL_STRICTNESS], description: 'ask a person before each call (always), the first call only (first_use) or never' };
    grant.properties['resources'] = {
      type: 'array',
      items: { type: 'string' },
      description: 'what the grant reaches: URL globs (https://host/path/**) for http_fetch, github_api, git and browser; workspace path globs for files; "program args-glob" for run_command; #channel or name@domain for slack_post and email_send',
    };
  }
  return schema;
}
