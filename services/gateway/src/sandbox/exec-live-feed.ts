import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { execLiveSubject, ExecLiveMessageSchema, type ExecLiveMessage } from '@packetagent/contracts';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';

export interface ExecLiveSubscription {
  close(): void;
}

/**
 * An exec's live output as the sandbox publishes it on core NATS: `started`, `output`, `ended`.
 * Lossy by design; the record and the payload store hold what it ended with.
 */
@Injectable()
export class ExecLiveFeed {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topology: Topology,
  ) {}

  /** Subscribes and confirms the subscription with the server, so nothing published from here on is missed. */
  async subscribe(workspaceId: string, execId: string, deliver: (message: ExecLiveMessage) => void): Promise<ExecLiveSubscription> {
    const subscription = this.nc.subscribe(execLiveSubject(this.topology.prefix, workspaceId, execId), {
      callback: (error, message) => {
        if (error) return;
        const decoded = decode(message.string(), execId);
        if (decoded) deliver(decoded);
      },
    });
    await this.nc.flush();
    return { close: () => subscription.unsubscribe() };
  }
}

/**
 * The subject replaces an id's dots with underscores, so `a.b` and `a_b` share one: a message
 * counts only when it names this exec.
 */
export function decode(text: string, execId: string): ExecLiveMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = ExecLiveMessageSchema.safeParse(value);
  return parsed.success && parsed.data.execId === execId ? parsed.data : null;
}
