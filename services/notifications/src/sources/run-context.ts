import { Injectable } from '@nestjs/common';
import { parsePayload, RunPinSchema, validateStoredDefinition, type RunPin, type WorkerDefinition } from '@packetagent/contracts';
import { PayloadNotFoundError, PayloadStore, PostgresEventStore } from '@packetagent/eventstore';
import { DomainError } from '@packetagent/contracts';

const CACHE_LIMIT = 512;

export class RunContextUnavailableError extends DomainError {
  readonly code = 'run_context_unavailable';
  override readonly retryable = true;
}

export interface RunContext {
  pin: RunPin;
  definition: WorkerDefinition;
}

/**
 * A run's pin (the first event of its stream: `run.admitted` or `run.deferred`) and the effective
 * definition intake keeps content-addressed under the pin's digest. Both are immutable, so
 * they are kept once read.
 */
@Injectable()
export class RunContexts {
  private readonly pins = new Map<string, RunPin>();
  private readonly definitions = new Map<string, WorkerDefinition>();

  constructor(
    private readonly store: PostgresEventStore,
    private readonly payloads: PayloadStore,
  ) {}

  async load(workspaceId: string, runId: string): Promise<RunContext | null> {
    const pin = await this.pin(runId);
    if (!pin) return null;
    return { pin, definition: await this.definition(workspaceId, pin) };
  }

  private async pin(runId: string): Promise<RunPin | null> {
    const cached = this.pins.get(runId);
    if (cached) return cached;
    const [first] = await this.store.readStream(`run-${runId}`, { limit: 1 });
    if (!first) return null;
    const parsed = RunPinSchema.safeParse(first.data);
    if (!parsed.success) return null;
    remember(this.pins, runId, parsed.data);
    return parsed.data;
  }

  private async definition(workspaceId: string, pin: RunPin): Promise<WorkerDefinition> {
    const key = `${workspaceId}:${pin.effectiveDigest}`;
    const cached = this.definitions.get(key);
    if (cached) return cached;
    try {
      const definition = validateStoredDefinition(parsePayload(await this.payloads.get(workspaceId, pin.effectiveDigest)));
      remember(this.definitions, key, definition);
      return definition;
    } catch (error) {
      if (error instanceof PayloadNotFoundError) throw new RunContextUnavailableError(`the effective definition ${pin.effectiveDigest} is not stored yet`);
      throw error;
    }
  }
}

function remember<T>(cache: Map<string, T>, key: string, value: T): void {
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}
