import { Injectable } from '@nestjs/common';
import { stringify } from 'yaml';
import { CommandBus } from '@packetagent/bus';
import {
  ValidationError,
  DRAFTED_WITHOUT_A_MODEL,
  draftFromWords,
  parseWorkerDefinition,
  SupervisorModelCommands,
  withoutUnaskedGrants,
  workerDefinitionJsonSchema,
  type DraftWorkerRequest,
  type RemovedGrant,
  type ValidationIssue,
} from '@packetagent/contracts';
import type { Preflight } from '../readiness/preflight';
import { WorkerReadiness } from '../readiness/worker-readiness';
import { jsonFromAnswer } from './answer-json';

/** A model call may retry inside the router; the bus waits for all of it. */
const DRAFT_TIMEOUT_MS = 180_000;

type ModelSpec = DraftWorkerRequest['model'];

export type Drafter =
  | { kind: 'model'; provider: string; model: string; structuredOutput: 'native' | 'prompt'; costUsd: number; usage: { inputTokens: number; outputTokens: number } }
  | { kind: 'builder'; label: typeof DRAFTED_WITHOUT_A_MODEL; template: { id: string; title: string }; reason: string };

export interface WorkerDraft {
  drafter: Drafter;
  /** The drafted definition as YAML, for review; the model's raw answer when it was not JSON. */
  source: string;
  valid: boolean;
  errors: ValidationIssue[];
  removedGrants: RemovedGrant[];
  notes: string[];
  readiness: Preflight | null;
}

let schema: Record<string, unknown> | undefined;

/**
 * A worker definition drafted from a description, for review; nothing is stored. The provider
 * asked is checked first: when it is ready the model drafts through structured output, else a
 * deterministic builder drafts from the templates and the words, labelled as such. Either way
 * the draft grants no tool the description did not ask for and is validated like any definition.
 */
@Injectable()
export class DraftWorkerUseCase {
  constructor(
    private readonly bus: CommandBus,
    private readonly readiness: WorkerReadiness,
  ) {}

  async execute(command: { workspaceId: string; prompt: string; model: ModelSpec | null }): Promise<WorkerDraft> {
    const model = command.model ?? { preset: 'default' as const };
    const unready = await this.whyUnready(command.workspaceId, model);
    if (unready) return this.fromWords(command.workspaceId, command.prompt, unready);

    schema ??= workerDefinitionJsonSchema();
    const answer = await this.bus.request(SupervisorModelCommands.draftWorker, { workspaceId: command.workspaceId, prompt: command.prompt, model, schema: schema as DraftWorkerRequest['schema'] }, { timeoutMs: DRAFT_TIMEOUT_MS });
    const drafter: Drafter = { kind: 'model', provider: answer.provider, model: answer.model, structuredOutput: answer.structuredOutput, costUsd: answer.costUsd, usage: answer.usage };
    const json = jsonFromAnswer(answer.text);
    if (!json.ok) return { drafter, source: answer.text, valid: false, errors: [{ path: '(answer)', message: json.message }], removedGrants: [], notes: [], readiness: null };
    const { value, removed } = withoutUnaskedGrants(json.value, command.prompt);
    return { drafter, removedGrants: removed, notes: [], ...(await this.checked(command.workspaceId, stringify(value, { lineWidth: 0 }))) };
  }

  private async fromWords(workspaceId: string, prompt: string, reason: string): Promise<WorkerDraft> {
    const draft = draftFromWords(prompt);
    const drafter: Drafter = { kind: 'builder', label: DRAFTED_WITHOUT_A_MODEL, template: draft.template, reason };
    return { drafter, removedGrants: draft.removedGrants, notes: draft.notes, ...(await this.checked(workspaceId, draft.source)) };
  }

  private async checked(workspaceId: string, source: string): Promise<Pick<WorkerDraft, 'source' | 'valid' | 'errors' | 'readiness'>> {
    try {
      const definition = parseWorkerDefinition(source, 'yaml');
      return { source, valid: true, errors: [], readiness: await this.readiness.of(workspaceId, definition) };
    } catch (error) {
      if (error instanceof ValidationError) return { source, valid: false, errors: [...error.issues], readiness: null };
      throw error;
    }
  }

  /** Why the model cannot draft now, or null when it can. */
  private async whyUnready(workspaceId: string, model: ModelSpec): Promise<string | null> {
    const name = 'preset' in model ? `preset:${model.preset}` : model.provider;
    try {
      const answer = await this.bus.request(SupervisorModelCommands.check, { workspaceId, providers: [name] });
      const found = answer.providers[0];
      return found?.available ? null : (found?.reason ?? `${name} is not available`);
    } catch (error) {
      return `no supervisor answered (${error instanceof Error ? error.message : String(error)})`;
    }
  }
}
