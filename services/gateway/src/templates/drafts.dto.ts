import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';
import { DRAFTED_WITHOUT_A_MODEL, MAX_DRAFT_PROMPT_CHARS } from '@packetagent/contracts';
import { Readiness } from '../readiness/readiness.dto';

export const DraftWorkerBody = z.strictObject({
  prompt: z.string().trim().min(1).max(MAX_DRAFT_PROMPT_CHARS).describe('what the worker should do, in plain words: its job, its schedule, where it reads and what it may post or send'),
  model: z
    .union([
      z.strictObject({ preset: z.enum(['default', 'fast', 'local']) }),
      z.strictObject({ provider: z.enum(['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local']), model: z.string().min(1).max(200) }),
    ])
    .optional()
    .describe('the model that drafts (preset default when absent); when it is not ready a deterministic builder drafts instead'),
});
export class DraftWorkerDto extends createZodDto(DraftWorkerBody) {}

const Drafter = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('model'),
    provider: z.string(),
    model: z.string(),
    structuredOutput: z.enum(['native', 'prompt']).describe('native: the provider held the answer to the definition schema; prompt: the schema was given in the prompt'),
    costUsd: z.number(),
    usage: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() }),
  }),
  z.object({
    kind: z.literal('builder'),
    label: z.literal(DRAFTED_WITHOUT_A_MODEL),
    template: z.object({ id: z.string(), title: z.string() }).describe('the template the draft starts from'),
    reason: z.string().describe('why no model drafted it'),
  }),
]);

export const WorkerDraft = z.object({
  drafter: Drafter.describe('who drafted it: a model, or the builder (labelled "drafted without a model")'),
  source: z.string().describe('the drafted definition as YAML, for review (the raw answer when the model answered no JSON)'),
  valid: z.boolean(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).describe('every validation issue at its path'),
  removedGrants: z.array(z.object({ tool: z.string(), reason: z.string() })).describe('grants taken out because the description did not ask for them'),
  notes: z.array(z.string()).describe('what to look at before saving'),
  readiness: Readiness.nullable().describe('what the draft would lack to run here; null when it is not valid'),
});
export class WorkerDraftDto extends createZodDto(WorkerDraft) {}
