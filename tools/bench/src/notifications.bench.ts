/**
 * The notifications outbox of the compiled app: attentions raised at a steady rate (through
 * policy's `policy.attention.raise`, as a run raises them), each routed to a webhook on a local
 * receiver. From the raise's answer (its event committed) to the signed webhook's arrival,
 * against the relay's own lag in the same run: the raise's answer to the event's arrival on
 * a plain NATS subscription of the workspace's subjects.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Subscription } from '@nats-io/transport-node';
import { CommandBus, topology } from '@packetagent/bus';
import { PolicyCommands } from '@packetagent/contracts';
import { cpuFrom, expectStatus, relayIdle, request, startApp, type App, type CpuUse } from './app-process';
import { now, paced, summarise, table, until, type Summary } from './stats';

export interface NotificationsOptions {
  ratePerSecond: number;
  warmup: number;
  count: number;
}

export interface NotificationsResults {
  ratePerSecond: number;
  raised: number;
  delivered: number;
  /** Raise answered (committed) → the event on a NATS subscription: the relay's lag. */
  relayMs: Summary;
  /** Raise answered → the webhook at the receiver: queued from the event, leased, signed, sent. */
  webhookMs: Summary;
  /** Webhooks received more than once (the same webhook-id): 0 when nothing was retried. */
  repeats: number;
  /** The goal: webhook p99 at most the relay's p99 plus 50 ms. */
  goalMs: number;
  /** Where the time goes, from the outbox's own records (p50 / p99 ms): event committed → queued, queued → first attempt, attempt → delivered. */
  stages: { queued: [number, number]; claimed: [number, number]; sent: [number, number] };
  cpu: CpuUse;
}

const RUNS = 50;

function worker(name: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Wait.
exit: { finish: { criteria: [done] } }
bounds: { maxConcurrentRuns: ${RUNS} }
triggers:
  - { manual: {} }
notifications:
  - { on: [attention], channel: webhook, credential: bench_hook }
`;
}

async function receiver(onHook: (attentionId: string, webhookId: string, at: number) => void): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { attention: { id: string } | null } };
      if (body.data.attention) onHook(body.data.attention.id, String(req.headers['webhook-id']), at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function prepare(app: App, port: number): Promise<string[]> {
  const auth = { authorization: `Bearer ${app.setup.apiKey}` };
  const ws = `${app.baseUrl}/api/v1/workspaces/${app.setup.workspaceId}`;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  expectStatus(await request(`${ws}/credentials/bench_hook`, 'PUT', { body: { value: JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, secret }) }, headers: auth }), 200, 'the credential');
  const created = await request<{ id: string }>(`${ws}/workers`, 'POST', { body: { name: 'notified' }, headers: auth });
  expectStatus(created, 201, 'the worker');
  expectStatus(await request(`${ws}/workers/${created.body.id}/versions`, 'POST', { raw: worker('notified'), headers: { ...auth, 'content-type': 'application/yaml' } }), 201, 'the version');
  const deployment = await request<{ id: string }>(`${ws}/deployments`, 'POST', { body: { workerId: created.body.id, acceptMissing: true }, headers: auth });
  expectStatus(deployment, 201, 'the deployment');
  const runs: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await request<{ runId: string }>(`${ws}/deployments/${deployment.body.id}/runs`, 'POST', { body: { input: {} }, headers: auth });
    expectStatus(run, 201, 'a run');
    runs.push(run.body.runId);
  }
  return runs;
}

async function stageTimes(app: App, attentionIds: string[]): Promise<NotificationsResults['stages']> {
  const { rows } = await app.db.pool.query<{ queued: number[]; claimed: number[]; sent: number[] }>(
    `WITH d AS (
       SELECT extract(epoch FROM d.created_at - e.occurred_at) * 1000 AS queued,
              extract(epoch FROM (d.attempt_log->0->>'at')::timestamptz - d.created_at) * 1000 AS claimed,
              extract(epoch FROM d.delivered_at - (d.attempt_log->0->>'at')::timestamptz) * 1000 AS sent
         FROM notifications.deliveries d JOIN events e ON e.event_id = d.source_event_id::uuid
        WHERE d.attention_id = ANY($1::text[]))
     SELECT ARRAY[percentile_cont(0.5) WITHIN GROUP (ORDER BY queued), percentile_cont(0.99) WITHIN GROUP (ORDER BY queued)] AS queued,
            ARRAY[percentile_cont(0.5) WITHIN GROUP (ORDER BY claimed), percentile_cont(0.99) WITHIN GROUP (ORDER BY claimed)] AS claimed,
            ARRAY[percentile_cont(0.5) WITHIN GROUP (ORDER BY sent), percentile_cont(0.99) WITHIN GROUP (ORDER BY sent)] AS sent
       FROM d`,
    [attentionIds],
  );
  const pair = (values: number[]): [number, number] => [Number(values[0]), Number(values[1])];
  return { queued: pair(rows[0]!.queued), claimed: pair(rows[0]!.claimed), sent: pair(rows[0]!.sent) };
}

export async function benchNotifications(options: NotificationsOptions): Promise<NotificationsResults> {
  const hooks = new Map<string, { at: number; webhookIds: Set<string>; count: number }>();
  const { server, port } = await receiver((attentionId, webhookId, at) => {
    const seen = hooks.get(attentionId);
    if (seen) {
      seen.count += 1;
      seen.webhookIds.add(webhookId);
    } else hooks.set(attentionId, { at, webhookIds: new Set([webhookId]), count: 1 });
  });
  // The supervisor stays off: admitted runs wait, and only the raises below make events.
  const app = await startApp({ PACKETAGENT_HTTP_ALLOW_PRIVATE: `127.0.0.1:${port}` });
  const topo = topology(app.bus.prefix);
  const commands = new CommandBus(app.bus.nc, topo);
  const onNats = new Map<string, { at: number; occurredAt: number }>();
  const subscription: Subscription = app.bus.nc.subscribe(`${topo.eventsSubjectRoot}.${app.setup.workspaceId}.attention.attention.requested`, {
    callback: (error, message) => {
      const at = now();
      if (error) return;
      const envelope = JSON.parse(message.string()) as { occurredAt: string; data: { attentionId: string } };
      if (!onNats.has(envelope.data.attentionId)) onNats.set(envelope.data.attentionId, { at, occurredAt: Date.parse(envelope.occurredAt) });
    },
  });
  try {
    const runs = await prepare(app, port);
    const workspaceId = app.setup.workspaceId;
    const raise = async (k: number, tag: string): Promise<{ attentionId: string; at: number }> => {
      const attention = await commands.request(
        PolicyCommands.raiseAttention,
        { workspaceId, runId: runs[k % RUNS]!, kind: 'uncertain_effect', tool: 'http_fetch', verb: 'POST', resource: null, arguments: { bench: `${tag}-${k}` } },
        { timeoutMs: 30_000 },
      );
      return { attentionId: attention.id, at: now() };
    };
    // Policy knows a run once its consumer applied run.admitted.
    for (let attempt = 0; ; attempt++) {
      try {
        await raise(0, 'probe');
        break;
      } catch (error) {
        if (attempt > 200) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const run = async (count: number, tag: string) => {
      const returned = new Map<string, number>();
      await paced(count, options.ratePerSecond, 64, async (k) => {
        const { attentionId, at } = await raise(k, tag);
        returned.set(attentionId, at);
      });
      await until(() => [...returned.keys()].every((id) => hooks.has(id) && onNats.has(id)), `every ${tag} webhook`, 60_000);
      return returned;
    };
    await run(options.warmup, 'warm');
    await relayIdle(app);
    const cpu = await cpuFrom(app);
    const returned = await run(options.count, 'steady');
    const use = await cpu();
    // From the event's own time (taken in its transaction, on this machine's clock) on both paths.
    const relayMs = summarise([...returned.keys()].map((id) => Math.max(0, onNats.get(id)!.at - onNats.get(id)!.occurredAt)));
    const webhookMs = summarise([...returned.keys()].map((id) => Math.max(0, hooks.get(id)!.at - onNats.get(id)!.occurredAt)));
    const stages = await stageTimes(app, [...returned.keys()]);
    const repeats = [...returned.keys()].filter((id) => (hooks.get(id)?.count ?? 0) > 1).length;
    return {
      ratePerSecond: options.ratePerSecond,
      raised: returned.size,
      delivered: [...returned.keys()].filter((id) => hooks.has(id)).length,
      relayMs,
      webhookMs,
      repeats,
      goalMs: relayMs.p99 + 50,
      stages,
      cpu: use,
    };
  } finally {
    subscription.unsubscribe();
    await app.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

export function printNotifications(results: NotificationsResults): void {
  process.stdout.write(`\n(n) notifications: attention raised -> signed webhook received, at ${results.ratePerSecond}/s (${results.raised} raised, ${results.delivered} delivered, ${results.repeats} repeated)\n`);
  process.stdout.write(
    `${table(
      ['path', 'p50 ms', 'p99 ms', 'max ms', 'events'],
      [
        ['relay (committed -> on NATS)', results.relayMs.p50, results.relayMs.p99, results.relayMs.max, results.relayMs.count],
        ['notification (committed -> webhook received)', results.webhookMs.p50, results.webhookMs.p99, results.webhookMs.max, results.webhookMs.count],
      ],
    )}\n`,
  );
  const { queued, claimed, sent } = results.stages;
  process.stdout.write(`stages p50/p99 ms: committed -> queued ${queued[0].toFixed(1)}/${queued[1].toFixed(1)}, queued -> attempt ${claimed[0].toFixed(1)}/${claimed[1].toFixed(1)}, attempt -> delivered ${sent[0].toFixed(1)}/${sent[1].toFixed(1)}\n`);
  const met = results.webhookMs.p99 <= results.goalMs;
  process.stdout.write(`goal: webhook p99 <= relay p99 + 50 ms = ${results.goalMs.toFixed(1)} ms: ${met ? 'met' : 'missed'} (${results.webhookMs.p99.toFixed(1)} ms)\n`);
}
