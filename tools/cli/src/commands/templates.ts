import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { CommandContext } from '../context';
import { loadDocument } from '../documents';
import { CliError, ExitCode, UsageError } from '../errors';

const MissingSchema = z.looseObject({ kind: z.string(), name: z.string(), reason: z.string() });
const ReadinessSchema = z.looseObject({ ready: z.boolean(), missing: z.array(MissingSchema) });

const TemplateSchema = z.looseObject({
  id: z.string(),
  version: z.number(),
  title: z.string(),
  category: z.string(),
  schedule: z.string().nullable(),
  summary: z.string(),
  tools: z.array(z.string()),
  credentials: z.array(z.string()),
});
const TemplateDetailSchema = TemplateSchema.extend({ definition: z.string(), demo: z.looseObject({ tools: z.array(z.string()), input: z.unknown() }), readiness: ReadinessSchema });
const InstantiatedSchema = z.looseObject({
  workerId: z.string(),
  workerName: z.string(),
  version: z.number(),
  digest: z.string(),
  demo: z.boolean(),
  exampleInput: z.unknown(),
  readiness: ReadinessSchema,
});
const DraftSchema = z.looseObject({
  drafter: z.looseObject({ kind: z.enum(['model', 'builder']), provider: z.string().optional(), model: z.string().optional(), structuredOutput: z.string().optional(), costUsd: z.number().optional(), label: z.string().optional(), template: z.looseObject({ id: z.string(), title: z.string() }).optional(), reason: z.string().optional() }),
  source: z.string(),
  valid: z.boolean(),
  errors: z.array(z.looseObject({ path: z.string(), message: z.string() })),
  removedGrants: z.array(z.looseObject({ tool: z.string(), reason: z.string() })),
  notes: z.array(z.string()),
  readiness: ReadinessSchema.nullable(),
});

const readinessLines = (readiness: z.infer<typeof ReadinessSchema>): string[] =>
  readiness.ready ? ['ready: nothing missing'] : [`not ready: ${readiness.missing.length} missing`, ...readiness.missing.map((item) => `  ${item.kind} ${item.name}: ${item.reason}`)];

/** `packetagent template list`: the starters shipped with the server. */
export async function listTemplates(context: CommandContext): Promise<void> {
  const { client } = context;
  const page = await client.get(client.workspacePath('templates'), z.looseObject({ items: z.array(TemplateSchema) }));
  const width = Math.max(...page.items.map((item) => item.id.length));
  const lines = page.items.map((item) => `${item.id.padEnd(width)}  ${item.category.padEnd(10)}  ${(item.schedule ?? 'on demand').padEnd(14)}  ${item.summary}`);
  context.report(lines, page);
}

/** `packetagent template show ID`: the definition as shipped and what this workspace lacks to run it. */
export async function showTemplate(context: CommandContext, id: string): Promise<void> {
  const { client } = context;
  const template = await client.get(client.workspacePath('templates', id), TemplateDetailSchema);
  const lines = [`${template.title} (${template.id} v${template.version}): ${template.summary}`, ...readinessLines(template.readiness), '', template.definition.trimEnd()];
  context.report(lines, template);
}

/** `packetagent template instantiate ID --name NAME [--demo] [--overrides FILE]`. */
export async function instantiateTemplate(context: CommandContext, id: string, options: { name: string; demo?: boolean; overrides?: string }): Promise<void> {
  const { client } = context;
  let overrides: unknown;
  if (options.overrides !== undefined) {
    const document = await loadDocument(options.overrides, context.documents);
    if (typeof document.value !== 'object' || document.value === null || Array.isArray(document.value)) throw new UsageError(`${document.label}: overrides must be an object`);
    overrides = document.value;
  }
  const made = await client.post(client.workspacePath('templates', id, 'instantiate'), { json: { name: options.name, demo: options.demo ?? false, ...(overrides ? { overrides } : {}) } }, InstantiatedSchema);
  const lines = [`worker ${made.workerName} (${made.workerId}) version ${made.version} digest sha256:${made.digest}${made.demo ? ' (scripted demo)' : ''}`, ...readinessLines(made.readiness)];
  if (made.demo) lines.push(`example input: ${JSON.stringify(made.exampleInput)}`);
  context.report(lines, made);
}

/** Reads `preset:fast`, `local:qwen3-8b` or `openai:gpt-4.1` as a model spec. */
export function modelOption(value: string): { preset: string } | { provider: string; model: string } {
  const [head, ...rest] = value.split(':');
  if (!head || rest.length === 0 || !rest.join(':')) throw new UsageError(`--model ${value}: expected preset:<default|fast|local> or <provider>:<model>`);
  return head === 'preset' ? { preset: rest.join(':') } : { provider: head, model: rest.join(':') };
}

/**
 * `packetagent worker draft PROMPT [--model M] [--output FILE]`: a definition drafted from a
 * description, for review. Says who drafted it; exits 1 when the draft is not valid.
 */
export async function draftWorker(context: CommandContext, prompt: string, options: { model?: string; output?: string; cwd: string }): Promise<void> {
  const { client } = context;
  const draft = await client.post(client.workspacePath('workers', 'draft'), { json: { prompt, ...(options.model ? { model: modelOption(options.model) } : {}) } }, DraftSchema);
  const by = draft.drafter.kind === 'model'
    ? `drafted by ${draft.drafter.provider}/${draft.drafter.model} (${draft.drafter.structuredOutput} structured output, $${(draft.drafter.costUsd ?? 0).toFixed(4)})`
    : `${draft.drafter.label} (from the "${draft.drafter.template?.title}" template: ${draft.drafter.reason})`;
  const lines = [by];
  for (const removed of draft.removedGrants) lines.push(`left out ${removed.tool}: ${removed.reason}`);
  for (const note of draft.notes) lines.push(`note: ${note}`);
  if (draft.readiness) lines.push(...readinessLines(draft.readiness));
  if (options.output) {
    const file = resolve(options.cwd, options.output);
    await writeFile(file, draft.source);
    lines.push(`wrote ${file}; apply it with: packetagent worker apply -f ${options.output}`);
  } else {
    lines.push('', draft.source.trimEnd());
  }
  context.report(lines, draft);
  if (!draft.valid) throw new CliError('the draft is not a valid definition yet: fix it, then apply it', ExitCode.failure, draft.errors);
}
