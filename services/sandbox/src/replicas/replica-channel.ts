import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Topology } from '@packetagent/bus';

type Answer<T> = { ok: true; result: T } | { ok: false; message: string };

/** The replica asked is gone: no one listens on its subject any more (NATS says so at once). */
export class ReplicaGoneError extends Error {
  override readonly name = 'ReplicaGoneError';
}

function noResponders(error: unknown): boolean {
  return /no responders/i.test(error instanceof Error ? `${error.name} ${error.message}` : String(error));
}

/**
 * Requests from one sandbox replica to another for what only that replica has (its running
 * execs, its browser contexts): each replica serves `<cmd root>.sandbox.replica.<id>.<purpose>`.
 */
export class ReplicaChannel<Request, Reply> {
  private subscription: Subscription | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly topo: Topology,
    private readonly purpose: string,
  ) {}

  /** Answers requests addressed to this replica. */
  serve(replicaId: string, handle: (request: Request) => Promise<Reply> | Reply): void {
    this.subscription = this.nc.subscribe(this.subject(replicaId), {
      callback: (error, message) => {
        if (error) return;
        let reply: Promise<Reply>;
        try {
          reply = Promise.resolve(handle(message.json<Request>()));
        } catch (failure) {
          reply = Promise.reject(failure);
        }
        reply.then(
          (result) => message.respond(JSON.stringify({ ok: true, result } satisfies Answer<Reply>)),
          (failure: unknown) => message.respond(JSON.stringify({ ok: false, message: failure instanceof Error ? failure.message : String(failure) } satisfies Answer<Reply>)),
        );
      },
    });
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  /** The replica's answer; ReplicaGoneError when it no longer listens, the far failure as an Error. */
  async ask(replicaId: string, request: Request, timeoutMs: number): Promise<Reply> {
    let message;
    try {
      message = await this.nc.request(this.subject(replicaId), JSON.stringify(request), { timeout: timeoutMs });
    } catch (error) {
      if (noResponders(error)) throw new ReplicaGoneError(`sandbox replica ${replicaId} is gone`);
      throw error;
    }
    const answer = message.json<Answer<Reply>>();
    if (!answer.ok) throw new Error(`sandbox replica ${replicaId} failed: ${answer.message}`);
    return answer.result;
  }

  /** The replica's answer, or null when it no longer listens (it is gone). */
  async askIfThere(replicaId: string, request: Request, timeoutMs: number): Promise<Reply | null> {
    try {
      return await this.ask(replicaId, request, timeoutMs);
    } catch (error) {
      if (error instanceof ReplicaGoneError) return null;
      throw error;
    }
  }

  private subject(replicaId: string): string {
    return `${this.topo.commandSubjectRoot}.sandbox.replica.${replicaId.replace(/[^A-Za-z0-9_-]/g, '_')}.${this.purpose}`;
  }
}
