import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import { ValidationError, type JsonValue } from '@packetagent/contracts';
import { BUS_TOPOLOGY, ConsumerRunner, ensureQueueStream, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { RunAdmission } from '../runs/run-admission';

export interface QueueMessage {
  workspaceId: string;
  subject: string;
  /** The producer's Nats-Msg-Id when it set one, else the stream sequence: the same message always maps to the same key. */
  messageKey: string;
  input: JsonValue | null;
}

/** Splits `<root>.<workspace>.<subject>` and reads the body as JSON, or as text when it is not JSON. */
export function decodeQueueMessage(root: string, message: Pick<JsMsg, 'subject' | 'seq' | 'data' | 'headers'>): QueueMessage {
  const rest = message.subject.slice(root.length + 1);
  const dot = rest.indexOf('.');
  if (!message.subject.startsWith(`${root}.`) || dot <= 0 || dot === rest.length - 1) {
    throw new ValidationError('invalid queue message', [{ path: 'subject', message: `expected ${root}.<workspace>.<subject>` }]);
  }
  const text = Buffer.from(message.data).toString('utf8');
  let input: JsonValue | null = null;
  if (text.length > 0) {
    try {
      input = JSON.parse(text) as JsonValue;
    } catch {
      input = { text };
    }
  }
  const msgId = message.headers?.get('Nats-Msg-Id');
  return { workspaceId: rest.slice(0, dot), subject: rest.slice(dot + 1), messageKey: msgId ? `id:${msgId}` : `seq:${message.seq}`, input };
}

/**
 * Each message on a workspace's queue subject becomes one activation of every deployment in
 * that workspace with a matching queue trigger. A redelivery (crash before ack) finds the runs
 * it already admitted through the dedupe key.
 */
@Injectable()
export class QueueTriggerConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('intake.queue');
  private runner: ConsumerRunner<QueueMessage> | null = null;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const root = this.topo.queueSubjectRoot;
    this.runner = new ConsumerRunner<QueueMessage>(this.nc, this.topo, (message) => decodeQueueMessage(root, message), (message) => this.handle(message), {
      durable: 'intake-queue-triggers',
      maxAckPending: 64,
      source: { stream: this.topo.queueStream, subjectRoot: root, provision: (jsm) => ensureQueueStream(jsm, this.topo) },
      log: (level, text, fields) => this.logger[level === 'info' ? 'log' : level](`${text} ${JSON.stringify(fields ?? {})}`),
    });
    await this.runner.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runner?.stop();
  }

  async handle(message: QueueMessage): Promise<void> {
    const { rows } = await this.pool.query<{ trigger_id: string; deployment_id: string }>(
      `SELECT t.trigger_id, t.deployment_id FROM intake.triggers t JOIN intake.deployments d ON d.id = t.deployment_id
        WHERE t.workspace_id = $1 AND t.kind = 'queue' AND t.active AND t.spec->'queue'->>'subject' = $2 AND d.status <> 'revoked'`,
      [message.workspaceId, message.subject],
    );
    for (const trigger of rows) {
      await this.store.transaction(async (client) => {
        await this.admission.admit(client, { workspaceId: message.workspaceId, deploymentId: trigger.deployment_id, triggerId: trigger.trigger_id }, {
          source: 'queue',
          dedupeKey: `queue:${message.messageKey}`,
          triggerId: trigger.trigger_id,
          input: message.input,
          details: { subject: message.subject },
          actor: { kind: 'system', id: `queue:${message.subject}` },
        });
      });
    }
  }
}
