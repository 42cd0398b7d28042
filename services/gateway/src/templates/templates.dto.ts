import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';
import { TEMPLATE_CATEGORIES, TEMPLATE_OVERRIDABLE_FIELDS, WORKER_NAME_PATTERN } from '@packetagent/contracts';
import { Readiness } from '../readiness/readiness.dto';

const TemplateSummary = z.object({
  id: z.string(),
  version: z.number().int().positive().describe('bumped whenever the definition or its demo changes'),
  title: z.string(),
  category: z.enum(TEMPLATE_CATEGORIES),
  schedule: z.string().nullable().describe('the cron expression it runs on, or null when it is started on demand'),
  summary: z.string(),
  tools: z.array(z.string()).describe('the tools it is granted'),
  credentials: z.array(z.string()).describe('the credentials it expects in the vault'),
});
export class TemplateListDto extends createZodDto(z.object({ items: z.array(TemplateSummary) })) {}

export const TemplateDetail = TemplateSummary.extend({
  definition: z.string().describe('the definition as shipped (packetagent/v1 YAML, comments kept)'),
  demo: z.object({
    tools: z.array(z.string()).describe('the grants a demo keeps: those that need no credential'),
    input: z.json().describe('input to start the demo with'),
  }),
  readiness: Readiness.describe('what the template needs that this workspace lacks now'),
});
export class TemplateDetailDto extends createZodDto(TemplateDetail) {}

export const InstantiateTemplateBody = z.strictObject({
  name: z.string().regex(WORKER_NAME_PATTERN, 'lower-case letters, digits and dashes, starting with a letter, 2 to 63 characters').describe('the new worker\'s name'),
  overrides: z
    .partialRecord(z.enum(TEMPLATE_OVERRIDABLE_FIELDS), z.json())
    .default({})
    .describe('fields of the definition to replace whole, e.g. {"triggers": [{"manual": {}}]}'),
  demo: z.boolean().default(false).describe('make the scripted demo: the model replays the template\'s script, only credential-free grants are kept, manual start only'),
});
export class InstantiateTemplateDto extends createZodDto(InstantiateTemplateBody) {}

export const InstantiatedTemplate = z.object({
  workerId: z.string(),
  workerName: z.string(),
  version: z.number().int().positive(),
  digest: z.string(),
  template: z.object({ id: z.string(), version: z.number().int().positive() }),
  demo: z.boolean(),
  exampleInput: z.json().describe('the demo input, to start a first run with'),
  readiness: Readiness,
});
export class InstantiatedTemplateDto extends createZodDto(InstantiatedTemplate) {}
