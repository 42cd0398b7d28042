import { Inject, Injectable } from '@nestjs/common';
import type { DraftWorkerRequest, DraftWorkerResult, JsonObject } from '@packetagent/contracts';
import type { ProviderRouter } from '@packetagent/providers';
import { PROVIDER_ROUTER } from '../supervisor.options';

/** Room for a whole definition; a model's own cap applies when lower. */
const DRAFT_MAX_OUTPUT_TOKENS = 8192;

const RULES = [
  'You write worker definitions for PacketAgent, a runtime for autonomous LLM workers.',
  'Answer with exactly one JSON object: a definition with apiVersion "packetagent/v1" and kind "Worker", and nothing else (no prose, no code fence).',
  'name: lower-case letters, digits and dashes. instructions: what the worker does, step by step, in plain sentences.',
  'Grant a tool only when the request asks for what it does, with the narrowest resources that do the job (exact hosts and paths, exact channels and addresses); never grant a tool "just in case".',
  'Outbound effects (posting, sending, pushing, writing to another system) get approval "always" unless the request says otherwise.',
  'Name a credential (lower_snake_case) for each tool that needs one; never put a secret in the definition.',
  'Give bounds and a perRunUsd budget that fit the job, and exit.finish.criteria that can be checked.',
  'Triggers: a cron trigger ({"name": ..., "cron": "m h dom mon dow", "timezone": "UTC"}) when the request names a schedule, and always {"manual": {}}.',
].join('\n');

/**
 * One model call that drafts a worker definition from a description. Where the model supports
 * structured output the schema is sent natively; otherwise it is given in the prompt, once. The
 * answer is returned as written: the caller validates it like any definition.
 */
@Injectable()
export class DraftWorkerDefinition {
  constructor(@Inject(PROVIDER_ROUTER) private readonly router: ProviderRouter) {}

  async execute(request: DraftWorkerRequest): Promise<DraftWorkerResult> {
    const model = await this.router.resolve(request.model);
    const native = model.entry.capabilities.structuredOutput;
    const schema = request.schema as JsonObject;
    const system = native ? RULES : `${RULES}\nThe JSON object must match this JSON Schema:\n${JSON.stringify(schema)}`;
    const turn = await this.router.complete({
      model,
      system,
      messages: [{ role: 'user', content: `Draft a worker for this request:\n\n${request.prompt}` }],
      tools: [],
      maxOutputTokens: Math.min(DRAFT_MAX_OUTPUT_TOKENS, model.entry.maxOutputTokens),
      ...(native ? { outputSchema: schema } : {}),
    });
    return {
      provider: turn.provider,
      model: turn.model,
      structuredOutput: native ? 'native' : 'prompt',
      text: turn.text,
      usage: turn.usage,
      costUsd: turn.costUsd,
    };
  }
}
