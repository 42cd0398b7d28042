import { computeEventDigest, type DecodedEvent, type EventRegistry } from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import { UnreplayableRunError } from '../../run/run.state';
import type { NewRunEvent, RunStreamPort } from '../ports';
import { SUPERVISOR_ACTOR } from '../supervisor-actor';

/** Reads a stream's events from `fromVersion`, each checked against its digest and link, and decoded. */
export async function readVerified(store: PostgresEventStore, registry: EventRegistry, stream: string, fromVersion: number): Promise<DecodedEvent[]> {
  const envelopes = await store.readStream(stream, { fromVersion });
  let previous: string | null | undefined;
  return envelopes.map((envelope) => {
    const { globalPosition: _position, digest, ...content } = envelope;
    if (computeEventDigest(content) !== digest) throw new UnreplayableRunError(`event at version ${envelope.streamVersion} of ${stream} does not match its digest`);
    if (previous !== undefined && envelope.prevDigest !== previous) throw new UnreplayableRunError(`event at version ${envelope.streamVersion} of ${stream} does not link to the one before it`);
    previous = digest;
    try {
      return registry.decode(envelope);
    } catch (error) {
      throw new UnreplayableRunError(`event ${envelope.type} at version ${envelope.streamVersion} cannot be decoded: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

/** `run-<id>` and `runctl-<id>` in the Postgres event store. */
export class StoreRunStream implements RunStreamPort {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly registry: EventRegistry,
    private readonly run: { runId: string; workspaceId: string },
  ) {}

  read(fromVersion: number): Promise<DecodedEvent[]> {
    return readVerified(this.store, this.registry, `run-${this.run.runId}`, fromVersion);
  }

  async append(expectedVersion: number, events: NewRunEvent[]): Promise<void> {
    await this.store.append(
      `run-${this.run.runId}`,
      expectedVersion,
      events.map((event) => ({ id: event.id, type: event.type, data: event.data, actor: SUPERVISOR_ACTOR })),
      { workspaceId: this.run.workspaceId },
    );
  }

  readControls(fromVersion: number): Promise<DecodedEvent[]> {
    return readVerified(this.store, this.registry, `runctl-${this.run.runId}`, fromVersion);
  }
}
