import Ajv from 'ajv';
import { z } from 'zod';
import type { JsonObject, JsonValue, WorkerDefinition } from '@packetagent/contracts';
import type { RunEmit } from './run.intent';

export const FinishArgs = z.object({
  summary: z.string().min(1),
  output: z.json().optional(),
  criteria: z.array(z.object({ criterion: z.string(), met: z.boolean(), evidence: z.string().optional() })).optional(),
});
export const AskOwnerArgs = z.object({ question: z.string().min(1) });
export const ProposeCriteriaArgs = z.object({ criteria: z.array(z.string().min(1).max(1000)).min(1).max(50) });
export const UpdateCriteriaArgs = ProposeCriteriaArgs.extend({ reason: z.string().min(1).max(1000) });

const ajv = new Ajv({ allErrors: true, strict: false });

/** Why a `finish` call does not end the run yet; empty when it does. */
export function finishProblems(definition: WorkerDefinition, criteria: readonly string[], args: z.infer<typeof FinishArgs>): string[] {
  const problems: string[] = [];
  if ('outputSchema' in definition.exit) {
    if (args.output === undefined) problems.push('`output` is required and must match the output schema');
    else if (!ajv.validate(definition.exit.outputSchema, args.output)) problems.push(`output does not match the schema: ${ajv.errorsText(ajv.errors)}`);
    return problems;
  }
  const reported = new Map((args.criteria ?? []).map((entry) => [entry.criterion.trim(), entry]));
  for (const criterion of criteria) {
    const entry = reported.get(criterion.trim());
    if (!entry) problems.push(`criterion not reported: "${criterion}"`);
    else if (!entry.met) problems.push(`criterion not met: "${criterion}"`);
  }
  return problems;
}

/** A final answer given as text instead of a `finish` call counts when it is JSON matching the output schema. */
export function outputFromText(text: string, schema: JsonObject): JsonValue | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim());
  } catch {
    return null;
  }
  return ajv.validate(schema, parsed) ? (parsed as JsonValue) : null;
}

/** The events of a definition's first start that are not about the model. */
export function declaredCriteria(definition: WorkerDefinition): RunEmit[] {
  return 'finish' in definition.exit && definition.exit.finish.criteria.length > 0
    ? [{ type: 'run.criteria_set', data: { criteria: definition.exit.finish.criteria, reason: 'declared by the worker', callId: 'definition' } }]
    : [];
}
