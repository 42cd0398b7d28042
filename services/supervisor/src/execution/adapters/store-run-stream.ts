import { assertChain, ChainBrokenError, runControlStreamId, runStreamId, type DecodedEvent, type EventRegistry } from '@packetagent/contracts';
import type { PayloadStore, PostgresEventStore } from '@packetagent/eventstore';
import { externalizePayloads, resolveRunPayloads } from './run-payloads';
import { UnreplayableRunError } from '../../run/run.state';
import type { NewRunEvent, RunStreamPort } from '../ports';
import { SUPERVISOR_ACTOR } from '../supervisor-actor';

/** Reads a stream's events from `fromVersion`, each checked against its digest and its link to the one before, and decoded. */
export async function readVerified(store: PostgresEventStore, registry: EventRegistry, stream: string, fromVersion: number): Promise<DecodedEvent[]> {
  const envelopes = await store.readStream(stream, { fromVersion });
  try {
    assertChain(envelopes, fromVersion === 1 ? undefined : { streamVersion: fromVersion - 1 });
  } catch (error) {
    if (error instanceof ChainBrokenError) throw new UnreplayableRunError(`${stream}: ${error.message}`);
    throw error;
  }
  return envelopes.map((envelope) => {
    try {
      return registry.decode(envelope);
    } catch (error) {
      throw new UnreplayableRunError(`event ${envelope.type} at version ${envelope.streamVersion} cannot be decoded: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

/** A run's history as the decider folds it: verified, decoded, and with its payloads resolved and verified. */
export async function readRunHistory(store: PostgresEventStore, registry: EventRegistry, payloads: PayloadStore, run: { runId: string; workspaceId: string }, fromVersion: number): Promise<DecodedEvent[]> {
  return resolveRunPayloads(payloads, run.workspaceId, await readVerified(store, registry, runStreamId(run.runId), fromVersion));
}

/** `run-<id>` and `runctl-<id>` in the Postgres event store, large fields in the payload store. */
export class StoreRunStream implements RunStreamPort {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly registry: EventRegistry,
    private readonly payloads: PayloadStore,
    private readonly run: { runId: string; workspaceId: string },
    private readonly limits: { thresholdBytes: number; eventBudgetBytes: number },
  ) {}

  read(fromVersion: number): Promise<DecodedEvent[]> {
    return readRunHistory(this.store, this.registry, this.payloads, this.run, fromVersion);
  }

  async append(expectedVersion: number, events: NewRunEvent[]): Promise<void> {
    const stored = [];
    for (const event of events) {
      stored.push({ id: event.id, type: event.type, data: await externalizePayloads(this.payloads, this.run.workspaceId, event, this.limits), actor: SUPERVISOR_ACTOR });
    }
    await this.store.append(runStreamId(this.run.runId), expectedVersion, stored, { workspaceId: this.run.workspaceId });
  }

  readControls(fromVersion: number): Promise<DecodedEvent[]> {
    return readVerified(this.store, this.registry, runControlStreamId(this.run.runId), fromVersion);
  }
}
