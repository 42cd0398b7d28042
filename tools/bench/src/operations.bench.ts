import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { topology, type Topology } from '@packetagent/bus';
import { EventRegistry, RUN_TERMINAL_EVENT_TYPES, runStreamId } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { projectionNamed, rebuildProjection, registerProjectorEvents, type RebuildResult } from '@packetagent/projections';
import { cpuFrom, expectStatus, relayIdle, request, spawnApp, startInfrastructure, type AppProcess, type CpuUse, type Infrastructure } from './app-process';
import { FINISH_TURN, UPDATE_TURN, writeScript, type Owner } from './execution-workers';
import { now, paced, ratio, summarise, table, until, type Summary } from './stats';

export interface OperationsOptions {
  /** Events of scripted runs to replay (at least; runs are whole). */
  replayEvents: number;
  /** Concurrent scripted runs while the history is produced. */
  historyRuns: number;
  sse: { clients: number; ratePerSecond: number; warmupSeconds: number; seconds: number };
}

export interface ReplayCase {
  kind: string;
  source: RebuildResult['source'] | 'jetstream (raw consume)';
  events: number;
  seconds: number;
  perSecond: number;
  cpu: CpuUse;
}

export interface ReplayResults {
  /** Events in PA_EVENTS and the events table, from the runs and the setup before them. */
  events: number;
  runs: number;
  /** Time the app took to produce the history (runs started to their last event projected). */
  historySeconds: number;
  raw: ReplayCase;
  rebuilds: ReplayCase[];
}

export interface SseCase {
  kind: string;
  clients: number;
  /** Events received in all, over every client (events x clients when none is lost). */
  received: number;
  expected: number;
  latencyMs: Summary;
  cpu: CpuUse;
}

export interface SseResults {
  ratePerSecond: number;
  seconds: number;
  events: number;
  ours: SseCase;
  baseline: SseCase;
}

export interface OperationsResults {
  replay: ReplayResults;
  sse: SseResults;
}

const EMAIL = 'bench@example.com';
const PASSWORD = randomBytes(18).toString('base64url');
const STEPS_PER_RUN = 20;
const WORKER_YAML = `apiVersion: packetagent/v1
kind: Worker
name: bench-history
model: { provider: scripted, model: bench-history }
instructions: Do the task.
tools: [{ tool: update_criteria, approval: never }]
bounds: { maxConcurrentRuns: 1000, maxIterations: 1000, maxToolCalls: 1000 }
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;

/**
 * Operations through the compiled app: a projection rebuilt from PA_EVENTS (and from the events
 * table) against a raw JetStream read of the same stream; events to 100 SSE clients against 100
 * NATS core subscribers on the relay's subjects. The console's load is phase `console`
 * (console.bench.ts).
 */
export async function benchOperations(options: OperationsOptions): Promise<OperationsResults> {
  const scriptsDir = mkdtempSync(join(tmpdir(), 'pa-bench-scripts-'));
  let infra: Infrastructure | null = null;
  let app: AppProcess | null = null;
  try {
    writeScript(scriptsDir, 'bench-history', [...Array.from({ length: STEPS_PER_RUN }, () => UPDATE_TURN), FINISH_TURN], 'free');
    infra = await startInfrastructure();
    app = await spawnApp(infra, 'the app', {
      PACKETAGENT_SCRIPTS_DIR: scriptsDir,
      PACKETAGENT_SSE_MAX_CONNECTIONS_PER_WORKSPACE: String(options.sse.clients + 10),
    });
    const setup = await request<{ workspaceId: string; apiKey: string }>(`${app.baseUrl}/api/v1/setup`, 'POST', {
      body: { token: infra.setupToken, email: EMAIL, password: PASSWORD, workspace: 'Bench' },
    });
    expectStatus(setup, 201, 'setup');
    const owner: Owner = { baseUrl: app.baseUrl, ...setup.body };
    const topo = topology(infra.bus.prefix);

    const replay = await benchReplay(infra, app, owner, topo, options);
    const sse = await benchSse(infra, app, owner, topo, options.sse);
    return { replay, sse };
  } finally {
    await app?.stop();
    await infra?.cleanup();
    rmSync(scriptsDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Projection replay.

async function deployHistoryWorker(owner: Owner): Promise<string> {
  const auth = { authorization: `Bearer ${owner.apiKey}` };
  const api = (path: string) => `${owner.baseUrl}/api/v1/workspaces/${owner.workspaceId}${path}`;
  const worker = await request<{ id: string }>(api('/workers'), 'POST', { body: { name: 'bench-history' }, headers: auth });
  expectStatus(worker, 201, 'creating the worker');
  const version = await request(api(`/workers/${worker.body.id}/versions`), 'POST', { raw: WORKER_YAML, headers: { ...auth, 'content-type': 'application/yaml' } });
  expectStatus(version, 201, 'applying the worker version');
  const deployed = await request<{ id: string }>(api('/deployments'), 'POST', { body: { workerId: worker.body.id, acceptMissing: true }, headers: auth });
  expectStatus(deployed, 201, 'deploying');
  return deployed.body.id;
}

async function maxPosition(infra: Infrastructure): Promise<number> {
  const { rows } = await infra.db.pool.query<{ max: string | null }>('SELECT max(global_position) AS max FROM events');
  return Number(rows[0]?.max ?? 0);
}

/** Every live projection has applied every committed event. */
async function projectorCaughtUp(infra: Infrastructure): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const head = await maxPosition(infra);
    const { rows } = await infra.db.pool.query<{ min: string | null }>('SELECT min(position) AS min FROM projector.checkpoints');
    if (Number(rows[0]?.min ?? 0) >= head) return;
    if (Date.now() > deadline) throw new Error(`the projector did not reach position ${head} within 180 s`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Scripted runs, `concurrent` at a time, until the store holds `events` events; answers the runs made. */
async function produceHistory(infra: Infrastructure, owner: Owner, deploymentId: string, events: number, concurrent: number): Promise<number> {
  const terminal: readonly string[] = RUN_TERMINAL_EVENT_TYPES;
  let runs = 0;
  while ((await maxPosition(infra)) < events) {
    const started: string[] = [];
    for (let i = 0; i < concurrent; i++) {
      const answer = await request<{ runId: string; hold: string | null }>(`${owner.baseUrl}/api/v1/workspaces/${owner.workspaceId}/deployments/${deploymentId}/runs`, 'POST', {
        body: { input: {} },
        headers: { authorization: `Bearer ${owner.apiKey}` },
      });
      expectStatus(answer, 201, 'starting a run');
      if (answer.body.hold !== null) throw new Error(`run ${answer.body.runId} was held (${answer.body.hold})`);
      started.push(runStreamId(answer.body.runId));
    }
    const deadline = Date.now() + 180_000;
    for (;;) {
      const { rows } = await infra.db.pool.query<{ ended: number; succeeded: number }>(
        `SELECT count(*)::int AS ended, count(*) FILTER (WHERE type = 'run.succeeded')::int AS succeeded FROM events WHERE stream_id = ANY($1) AND type = ANY($2)`,
        [started, terminal],
      );
      if (rows[0]!.ended === started.length) {
        if (rows[0]!.succeeded !== started.length) throw new Error(`${started.length - rows[0]!.succeeded} history runs did not succeed`);
        break;
      }
      if (Date.now() > deadline) throw new Error('the history runs did not end within 180 s');
      await new Promise((done) => setTimeout(done, 100));
    }
    runs += started.length;
  }
  return runs;
}

/** The baseline: an ordered consumer reads the stream from its first message to its last, decoding each as JSON; no acks, no writes. */
async function rawConsume(nc: NatsConnection, stream: string): Promise<{ events: number; seconds: number }> {
  const info = await (await jetstreamManager(nc)).streams.info(stream);
  const lastSeq = info.state.last_seq;
  const t0 = now();
  const consumer = await jetstream(nc).consumers.get(stream, { deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume({ max_messages: 500 });
  let events = 0;
  let bytes = 0;
  try {
    for await (const message of messages) {
      bytes += JSON.stringify(message.json()).length;
      events++;
      if (message.seq >= lastSeq) break;
    }
  } finally {
    await messages.close().catch(() => undefined);
  }
  if (bytes === 0) throw new Error('the raw consume read nothing');
  return { events, seconds: (now() - t0) / 1_000 };
}

async function benchReplay(infra: Infrastructure, app: AppProcess, owner: Owner, topo: Topology, options: OperationsOptions): Promise<ReplayResults> {
  const deploymentId = await deployHistoryWorker(owner);
  const t0 = now();
  const runs = await produceHistory(infra, owner, deploymentId, options.replayEvents, options.historyRuns);
  await relayIdle(app);
  await projectorCaughtUp(infra);
  const historySeconds = (now() - t0) / 1_000;
  const events = await maxPosition(infra);
  const info = await (await jetstreamManager(infra.bus.nc)).streams.info(topo.eventsStream);
  if (info.state.messages !== events) throw new Error(`${topo.eventsStream} holds ${info.state.messages} messages, the store ${events} events`);
  process.stdout.write(`replay: history of ${events} events from ${runs} runs in ${historySeconds.toFixed(1)} s\n`);

  const registry = registerProjectorEvents(new EventRegistry());
  const rebuild = async (kind: string, name: string, fromJetStream: boolean): Promise<ReplayCase> => {
    const cpu = await cpuFrom(app);
    const started = now();
    const result = await rebuildProjection({
      pool: infra.db.pool,
      registry,
      projection: projectionNamed(name),
      bus: fromJetStream ? { nc: infra.bus.nc, topology: topo } : undefined,
    });
    const seconds = (now() - started) / 1_000;
    const use = await cpu();
    if (result.source !== (fromJetStream ? 'jetstream' : 'events_table')) throw new Error(`the rebuild of ${name} replayed from ${result.source}`);
    if (result.gaps > 0) throw new Error(`the rebuild of ${name} recorded ${result.gaps} gaps`);
    const replayed = result.applied + result.gaps;
    if (replayed < events) throw new Error(`the rebuild of ${name} replayed ${replayed} events of ${events}`);
    return { kind, source: result.source, events: replayed, seconds, perSecond: replayed / seconds, cpu: use };
  };
  const raw = async (): Promise<ReplayCase> => {
    const cpu = await cpuFrom(app);
    const read = await rawConsume(infra.bus.nc, topo.eventsStream);
    const use = await cpu();
    if (read.events !== events) throw new Error(`the raw consume read ${read.events} messages of ${events}`);
    return { kind: 'raw JetStream consume (ordered, JSON decode)', source: 'jetstream (raw consume)', events: read.events, seconds: read.seconds, perSecond: read.events / read.seconds, cpu: use };
  };

  // Warm the stream's file store and both code paths, then alternate baseline and ours.
  await raw();
  const rebuilds: ReplayCase[] = [];
  const baselines: ReplayCase[] = [];
  for (const [kind, name, fromJetStream] of [
    ['rebuild runs (from PA_EVENTS)', 'runs', true],
    ['rebuild run_timeline (from PA_EVENTS)', 'run_timeline', true],
    ['rebuild run_timeline (from the events table)', 'run_timeline', false],
  ] as const) {
    baselines.push(await raw());
    rebuilds.push(await rebuild(kind, name, fromJetStream));
  }
  // The best of the baseline reads: the ratio is against what the stream can give.
  const best = baselines.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  return { events, runs, historySeconds, raw: best, rebuilds };
}

// ---------------------------------------------------------------------------------------------
// 2. Event to SSE client.

/** One SSE connection that records, per sequence number, when its event arrived. */
class SseClient {
  readonly received = new Map<number, number>();
  connected = false;
  private buffer = '';
  private req: ClientRequest | null = null;

  constructor(private readonly onEvent: (client: SseClient, seq: number, at: number) => void) {}

  open(url: string, apiKey: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.req = httpRequest(url, { headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' } }, (response: IncomingMessage) => {
        if (response.statusCode !== 200) {
          reject(new Error(`the event stream answered ${String(response.statusCode)}`));
          response.resume();
          return;
        }
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const at = now();
          this.buffer += chunk;
          let end = this.buffer.indexOf('\n\n');
          while (end >= 0) {
            const frame = this.buffer.slice(0, end);
            this.buffer = this.buffer.slice(end + 2);
            if (frame.includes(': connected') && !this.connected) {
              this.connected = true;
              resolve();
            }
            // Only the benchmark's own events carry a sequence number in their data.
            const seq = /"benchSeq":\s*(\d+)/.exec(frame)?.[1];
            if (seq !== undefined) this.onEvent(this, Number(seq), at);
            end = this.buffer.indexOf('\n\n');
          }
        });
      });
      this.req.on('error', (error) => {
        if (!this.connected) reject(error);
      });
      this.req.end();
    });
  }

  close(): void {
    this.req?.destroy();
  }
}

async function benchSse(infra: Infrastructure, app: AppProcess, owner: Owner, topo: Topology, options: OperationsOptions['sse']): Promise<SseResults> {
  const store = new PostgresEventStore(infra.db.pool);
  const committedAt = new Map<number, number>();
  let seq = 0;
  const padding = 'x'.repeat(240);
  // A run-sized event on streams of its own; the relay publishes it like any other.
  const append = async (tag: string) => {
    const k = seq++;
    await store.append(`bench-${tag}${k % 50}`, 'any', [
      { type: 'bench.ticked', schemaVersion: 1, data: { benchSeq: k, note: padding, step: k % 40 }, actor: { kind: 'system', id: 'bench' } },
    ], { workspaceId: owner.workspaceId });
    committedAt.set(k, now());
  };
  const steadyCount = Math.round(options.ratePerSecond * options.seconds);
  const warmupCount = Math.round(options.ratePerSecond * options.warmupSeconds);

  /** Warm-up then the measured stretch; latency is receive time less the append's return (committed). */
  const measure = async (kind: string, receivers: () => { count: () => number; latencies: number[] }): Promise<SseCase> => {
    const sink = receivers();
    await paced(warmupCount, options.ratePerSecond, 64, () => append('warm-'));
    await relayIdle(app);
    sink.latencies.length = 0;
    const before = sink.count();
    const cpu = await cpuFrom(app);
    await paced(steadyCount, options.ratePerSecond, 64, () => append('steady-'));
    const expected = steadyCount * options.clients;
    // A lost event shows as received < expected in the results rather than failing the phase.
    await until(() => sink.count() - before >= expected, `${kind}: every client to receive every event`, 30_000).catch(() => undefined);
    const use = await cpu();
    return { kind, clients: options.clients, received: sink.count() - before, expected, latencyMs: summarise(sink.latencies), cpu: use };
  };

  // The baseline: plain NATS core subscribers on the subjects the gateway subscribes to.
  const subs: Subscription[] = [];
  let natsCount = 0;
  const natsLatencies: number[] = [];
  let measuring = false;
  const baseline = await measure('NATS core subscribers (relay subjects)', () => {
    for (let i = 0; i < options.clients; i++) {
      subs.push(
        infra.bus.nc.subscribe(`${topo.eventsSubjectRoot}.${owner.workspaceId}.>`, {
          callback: (error, message) => {
            const at = now();
            if (error) return;
            const found = /"benchSeq":\s*(\d+)/.exec(message.string())?.[1];
            if (found === undefined) return;
            natsCount++;
            const committed = committedAt.get(Number(found));
            if (measuring && committed !== undefined) natsLatencies.push(at - committed);
          },
        }),
      );
    }
    measuring = true;
    return { count: () => natsCount, latencies: natsLatencies };
  });
  for (const sub of subs) sub.unsubscribe();
  measuring = false;

  const clients: SseClient[] = [];
  let sseCount = 0;
  const sseLatencies: number[] = [];
  try {
    const url = `${owner.baseUrl}/api/v1/workspaces/${owner.workspaceId}/events/stream`;
    for (let i = 0; i < options.clients; i++) {
      const client = new SseClient((_client, k, at) => {
        sseCount++;
        const committed = committedAt.get(k);
        if (measuring && committed !== undefined) sseLatencies.push(at - committed);
      });
      clients.push(client);
      await client.open(url, owner.apiKey);
    }
    measuring = true;
    const ours = await measure(`SSE clients on GET events/stream`, () => ({ count: () => sseCount, latencies: sseLatencies }));
    return { ratePerSecond: options.ratePerSecond, seconds: options.seconds, events: steadyCount, ours, baseline };
  } finally {
    for (const client of clients) client.close();
  }
}

const cpuCells = (cpu: CpuUse): (string | number)[] => [cpu.machine ?? 'n/a', cpu.app ?? '', cpu.bench];

export function printOperations({ replay, sse }: OperationsResults): void {
  process.stdout.write(
    `\n(g) projection replay: ${replay.events} events of ${replay.runs} scripted runs (made in ${replay.historySeconds.toFixed(1)} s); ` +
      'baseline: the best of the raw reads of PA_EVENTS made between the rebuilds (goal: at least 0.50x)\n',
  );
  process.stdout.write(
    `${table(
      ['path', 'events', 'seconds', 'events/s', 'vs raw consume', 'goal', 'machine cores', 'app cores', 'bench cores'],
      [...replay.rebuilds, replay.raw].map((r) => [
        r.kind, r.events, r.seconds, r.perSecond, `${(r.perSecond / replay.raw.perSecond).toFixed(3)}x`, r === replay.raw ? '' : r.perSecond >= 0.5 * replay.raw.perSecond ? 'met' : 'not met', ...cpuCells(r.cpu),
      ]),
    )}\n`,
  );
  process.stdout.write(`\n(g) event -> client at a steady ${sse.ratePerSecond} events/s for ${sse.seconds} s, ${sse.ours.clients} clients; from the append's return (committed)\n`);
  process.stdout.write(
    `${table(
      ['path', 'received', 'expected', 'p50 ms', 'p99 ms', 'max ms', 'p50 vs NATS', 'p99 vs NATS', 'machine cores', 'app cores', 'bench cores'],
      [sse.ours, sse.baseline].map((r) => [
        r.kind, r.received, r.expected, r.latencyMs.p50, r.latencyMs.p99, r.latencyMs.max, ratio(r.latencyMs.p50, sse.baseline.latencyMs.p50), ratio(r.latencyMs.p99, sse.baseline.latencyMs.p99), ...cpuCells(r.cpu),
      ]),
    )}\n`,
  );
}
