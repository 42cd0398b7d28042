import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { MAX_PACKAGE_REQUIREMENTS } from '../packetade/worker-package.v1';

/**
 * Whether this deployment's supervisor can serve model providers, asked before a deploy (a
 * package preflight lists the providers its worker needs). Served by every supervisor replica
 * from the provider settings and keys it runs with; nothing is called on the providers.
 */

const workspaceId = z.string().regex(Identifiers.workspace);

/**
 * A provider as a package names it: `anthropic`, `openai`, `gemini`, `openrouter`, `minimax`,
 * `local`, `scripted`, or `preset:<default|fast|local>`. A name the supervisor does not know is
 * answered as not available, with the reason, rather than refused.
 */
export const RequestedModelProviderSchema = z.string().min(1).max(200);

export const CheckModelProvidersRequestSchema = z.object({
  workspaceId,
  providers: z.array(RequestedModelProviderSchema).min(1).max(MAX_PACKAGE_REQUIREMENTS),
});
export type CheckModelProvidersRequest = z.infer<typeof CheckModelProvidersRequestSchema>;

export const ModelProviderAvailabilitySchema = z.object({
  /** The name as requested. */
  provider: z.string(),
  available: z.boolean(),
  /** Why it is not available, and what to set; null when it is. */
  reason: z.string().nullable(),
  /** For a preset, the provider it resolves to now (null when none is set up); absent for a provider. */
  resolvesTo: z.string().nullable().optional(),
});
export type ModelProviderAvailability = z.infer<typeof ModelProviderAvailabilitySchema>;

export const CheckModelProvidersResultSchema = z.object({
  /** One answer per requested name, in the order asked. */
  providers: z.array(ModelProviderAvailabilitySchema),
});
export type CheckModelProvidersResult = z.infer<typeof CheckModelProvidersResultSchema>;

/** Longest description of a worker a draft is asked for, in characters. */
export const MAX_DRAFT_PROMPT_CHARS = 4000;

export const DraftWorkerRequestSchema = z.object({
  workspaceId,
  prompt: z.string().min(1).max(MAX_DRAFT_PROMPT_CHARS),
  /** The model spec to draft with (a preset or a provider and model), as in a definition. */
  model: z.union([
    z.object({ preset: z.enum(['default', 'fast', 'local']) }),
    z.object({ provider: z.enum(['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local']), model: z.string().min(1).max(200) }),
  ]),
  /** The JSON Schema the answer must match. */
  schema: z.record(z.string(), z.json()),
});
export type DraftWorkerRequest = z.infer<typeof DraftWorkerRequestSchema>;

export const DraftWorkerResultSchema = z.object({
  provider: z.string(),
  model: z.string(),
  /** `native`: the provider's structured output held the answer to the schema; `prompt`: the schema was given in the prompt. */
  structuredOutput: z.enum(['native', 'prompt']),
  /** The model's answer as it wrote it. */
  text: z.string(),
  usage: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }),
  costUsd: z.number().nonnegative(),
});
export type DraftWorkerResult = z.infer<typeof DraftWorkerResultSchema>;

export const SupervisorModelCommands = {
  check: defineCommand('supervisor.models.check', CheckModelProvidersRequestSchema, CheckModelProvidersResultSchema),
  /** One model call that drafts a worker definition from a description; nothing is stored. */
  draftWorker: defineCommand('supervisor.models.draft_worker', DraftWorkerRequestSchema, DraftWorkerResultSchema),
} as const;
