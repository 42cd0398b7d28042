import { Injectable } from '@nestjs/common';
import { actorCallStream, DomainError, newEventId, PacketAdeEventTypes, type ActorOperation } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import type { ActorPrincipal } from '../actors/actor-principal';
import { OperationNotGrantedError } from './actor-errors';

export type DoorTransport = 'rest' | 'grpc';

/** What a call touched, for its audit record. */
export interface CallRefs {
  deploymentId?: string | null;
  runId?: string | null;
  packageDigest?: string | null;
}

/**
 * Every call an actor token makes, allowed or refused, is recorded as
 * `packetade.actor_call_recorded` before its answer leaves: the record is how an admin sees what
 * PacketADE did in the workspace (the events of that type, by `tokenId` or `actorName`). Each
 * record is a stream of its own, so a token's concurrent calls append without contending. A
 * call outside the token's operations is refused here, and recorded as such.
 */
@Injectable()
export class ActorCalls {
  constructor(private readonly store: PostgresEventStore) {}

  async run<T>(principal: ActorPrincipal, operation: ActorOperation, transport: DoorTransport, refs: CallRefs, work: (refs: CallRefs) => Promise<T>): Promise<T> {
    const touched: CallRefs = { ...refs };
    let result: T;
    try {
      if (!principal.operations.includes(operation)) throw new OperationNotGrantedError(operation);
      result = await work(touched);
    } catch (error) {
      await this.record(principal, operation, transport, touched, outcomeOf(error));
      throw error;
    }
    await this.record(principal, operation, transport, touched, 'ok');
    return result;
  }

  private async record(principal: ActorPrincipal, operation: ActorOperation, transport: DoorTransport, refs: CallRefs, outcome: string): Promise<void> {
    await this.store.append(
      actorCallStream(newEventId()),
      'no_stream',
      [
        {
          type: PacketAdeEventTypes.actorCallRecorded,
          actor: principal.actor,
          data: {
            workspaceId: principal.workspaceId,
            tokenId: principal.tokenId,
            actorName: principal.actorName,
            operation,
            transport,
            outcome,
            deploymentId: clip(refs.deploymentId),
            runId: clip(refs.runId),
            packageDigest: refs.packageDigest ?? null,
          },
        },
      ],
      { workspaceId: principal.workspaceId },
    );
  }
}

const SAFE_REF = /^[A-Za-z0-9._:-]{1,100}$/;

function outcomeOf(error: unknown): string {
  return error instanceof DomainError ? error.code.slice(0, 100) : 'internal_error';
}

/** A reference taken from a request is recorded only when it could be an id: a client's bytes never reach the event as they came. */
function clip(value: string | null | undefined): string | null {
  return typeof value === 'string' && SAFE_REF.test(value) ? value : null;
}
