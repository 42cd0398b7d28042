/**
 * The PacketADE door of the compiled app: activation over gRPC against the same activation over
 * REST (same app, same deployments, interleaved, with the workspace API's activation beside
 * them); events on a gRPC WatchEvents stream against the same events on a NATS core
 * subscription of the workspace's event subjects; and the door's activations at a steady rate
 * from a single token.
 */
import { randomInt } from 'node:crypto';
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import type { Subscription } from '@nats-io/transport-node';
import { topology } from '@packetagent/bus';
import { cpuFrom, relayIdle, startApp, type App, type CpuUse } from './app-process';
import { admittedCount, eventLoopDelay, rollbacks, transactions } from './app-probes';
import { activateGrpc, activateRest, deploy, grpcDoor, issueToken, MAX_CONCURRENT_RUNS, type FeedEventMessage, type GrpcDoor } from './packetade-door';
import { now, paced, ratio, summarise, table, until, type Summary } from './stats';


export interface PacketAdeOptions {
  /** Sequential activations per path: `warmup` unmeasured, then `count` measured. */
  activation: { warmup: number; count: number };
  /** `slowCount` activations at 20 per second make the last stretch. */
  watch: { ratePerSecond: number; warmupSeconds: number; seconds: number; tokens: number; slowCount: number };
}

export interface PacketAdeResults {
  activation: {
    deployments: number;
    /** gRPC Activate until its answer; REST POST runs until its parsed 201; the workspace API's POST runs (owner API key, no door) until its 201. */
    grpc: Summary;
    rest: Summary;
    workspace: Summary;
    /** Database transactions (statements in autocommit included) per activation, with the relay and projector catching up. */
    transactionsPerActivation: number;
    /** Inspect over each transport: the same door work without an admission. */
    inspectGrpc: Summary;
    inspectRest: Summary;
    cpu: CpuUse;
    verified: { runs: number; admittedEvents: number; checkedRightAfterAnswer: number };
  };
  watch: {
    deployments: number;
    /** Actor tokens of the one actor the door's activations were spread over. */
    tokens: number;
    ratePerSecond: number;
    seconds: number;
    /** One per producer of the events, on the same stream and subscription. */
    stretches: WatchStretch[];
    /** Over the whole stream. */
    duplicatesOnWatch: number;
    outOfOrderOnWatch: number;
  };
  /** The steady activations again, with a single token. */
  oneToken: {
    ratePerSecond: number;
    seconds: number;
    calls: number;
    answered: number;
    /** run.admitted events on the stretch's deployments, and activate calls recorded on the token's stream. */
    admittedRuns: number;
    recordedCalls: number;
    activateMs: Summary;
    failedCalls: Record<string, number>;
    rollbacks: number;
    cpu: CpuUse;
  };
}

export interface WatchStretch {
  producer: string;
  ratePerSecond: number;
  activations: number;
  /** From the activation call's return to the run.admitted event's arrival. */
  watchMs: Summary;
  relayMs: Summary;
  /** The same, from the event's occurredAt (set before its transaction committed; millisecond precision). */
  watchFromOccurredMs: Summary;
  relayFromOccurredMs: Summary;
  /** The activation calls of the measured stretch, for what the reference point means. */
  activateMs: Summary;
  received: { watch: number; relay: number };
  /** Activation calls that failed, by message; their runs are not measured. */
  failedCalls: Record<string, number>;
  failedWarmupCalls: Record<string, number>;
  /** Transactions that rolled back in the app's database during the stretch (pg_stat_database). */
  rollbacks: number;
  /** The app's event-loop delay over the stretch, beyond the 10 ms of prom-client's monitoring timer. */
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  cpu: CpuUse;
}

type ActivationPath = 'grpc' | 'rest' | 'workspace';
const PATHS: readonly ActivationPath[] = ['grpc', 'rest', 'workspace'];

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export async function benchPacketAde(options: PacketAdeOptions): Promise<PacketAdeResults> {
  const app = await startApp();
  try {
    const activation = await benchActivation(app, options.activation);
    await relayIdle(app);
    const watch = await benchWatch(app, options.watch);
    await relayIdle(app);
    const oneToken = await benchOneToken(app, options.watch);
    return { activation, watch, oneToken };
  } finally {
    await app.stop();
  }
}

/**
 * N rounds, each one gRPC and one REST activation through the door on the same deployment, and
 * the same activation through the workspace API with the owner's API key (no door), one call at
 * a time; the order within a round is drawn at random, so drift meets the paths alike.
 */
async function benchActivation(app: App, options: PacketAdeOptions['activation']): Promise<PacketAdeResults['activation']> {
  const token = await issueToken(app, 'bench-activate');
  const door = await grpcDoor(app.grpcAddress, token);
  try {
    const total = PATHS.length * (options.warmup + options.count);
    const deployments = await deploy(door, 'bench-activate', Math.max(2, Math.ceil(total / (MAX_CONCURRENT_RUNS / 2))));
    const runIds: string[] = [];
    const call: Record<ActivationPath, (deploymentId: string, tag: string) => Promise<{ ms: number; runId: string }>> = {
      grpc: (deploymentId, tag) => activateGrpc(door, deploymentId, tag),
      rest: (deploymentId, tag) => activateRest(`${app.baseUrl}/api/v1/packetade/deployments/${deploymentId}/runs`, token, tag),
      workspace: (deploymentId, tag) => activateRest(`${app.baseUrl}/api/v1/workspaces/${app.setup.workspaceId}/deployments/${deploymentId}/runs`, app.setup.apiKey, tag),
    };
    const round = async (i: number, tag: string, out: Record<ActivationPath, number[]> | null, check: boolean) => {
      const deploymentId = deployments[i % deployments.length]!;
      for (const path of shuffled(PATHS)) {
        const { ms, runId } = await call[path](deploymentId, tag);
        out?.[path].push(ms);
        runIds.push(runId);
        if (check && (await admittedCount(app, [runId])) !== 1) throw new Error(`run ${runId} was answered before its run.admitted event was visible`);
      }
    };

    // Warm-up (JIT, channels, plans). Here, and only here, every run is looked up right after its
    // answer from another connection: the answer must follow the commit.
    for (let i = 0; i < options.warmup; i++) await round(i, 'warm', null, true);
    const checkedRightAfterAnswer = runIds.length;
    await relayIdle(app);
    await app.db.pool.query('CHECKPOINT').catch(() => undefined);

    const measured: Record<ActivationPath, number[]> = { grpc: [], rest: [], workspace: [] };
    const before = await transactions(app);
    const cpu = await cpuFrom(app);
    for (let i = 0; i < options.count; i++) await round(i, 'seq', measured, false);
    const use = await cpu();
    await relayIdle(app);
    const after = await transactions(app);

    // The same door work without an admission: Inspect over gRPC and GET deployment over REST,
    // interleaved the same way, after 20 unmeasured of each.
    const inspect = { grpc: [] as number[], rest: [] as number[] };
    const inspectCount = Math.max(20, Math.round(options.count / 2));
    for (let i = 0; i < inspectCount + 20; i++) {
      const deploymentId = deployments[i % deployments.length]!;
      const viaGrpc = async () => {
        const t0 = now();
        await door.call('Inspect', { deploymentId });
        if (i >= 20) inspect.grpc.push(now() - t0);
      };
      const viaRest = async () => {
        const t0 = now();
        const response = await fetch(`${app.baseUrl}/api/v1/packetade/deployments/${deploymentId}`, { headers: { authorization: `Bearer ${token}` } });
        await response.text();
        if (response.status !== 200) throw new Error(`GET deployment answered ${response.status}`);
        if (i >= 20) inspect.rest.push(now() - t0);
      };
      for (const step of shuffled([viaGrpc, viaRest])) await step();
    }

    if (new Set(runIds).size !== runIds.length) throw new Error('two activations answered with the same run');
    const admittedEvents = await admittedCount(app, runIds);
    if (admittedEvents !== runIds.length) throw new Error(`${runIds.length} activations answered but ${admittedEvents} run.admitted events exist for them`);
    return {
      deployments: deployments.length,
      grpc: summarise(measured.grpc),
      rest: summarise(measured.rest),
      workspace: summarise(measured.workspace),
      inspectGrpc: summarise(inspect.grpc),
      inspectRest: summarise(inspect.rest),
      transactionsPerActivation: (after - before) / (PATHS.length * options.count),
      cpu: use,
      verified: { runs: runIds.length, admittedEvents, checkedRightAfterAnswer },
    };
  } finally {
    door.close();
  }
}

/** Activations at a steady rate, the k-th made by `activate(k)`; failures are counted, not thrown. */
class SteadyActivations {
  readonly activateMs: number[] = [];
  private next = 0;

  constructor(private readonly activate: (k: number, tag: string) => Promise<{ ms: number; runId: string; at: number }>) {}

  /** Fires `count` activations at `rate` per second; the runs answered, with when their answer came. */
  async run(count: number, rate: number, tag: string): Promise<{ returned: Map<string, number>; failed: Map<string, number> }> {
    const returned = new Map<string, number>();
    const failed = new Map<string, number>();
    this.activateMs.length = 0;
    await paced(count, rate, 32, async () => {
      try {
        const { ms, runId, at } = await this.activate(this.next++, tag);
        returned.set(runId, at);
        this.activateMs.push(ms);
      } catch (error) {
        const what = (error as Error).message.replace(/[0-9a-f]{20}/g, '<token>').replace(/version \d+/g, 'version <n>');
        failed.set(what, (failed.get(what) ?? 0) + 1);
      }
    });
    return { returned, failed };
  }
}

/**
 * Activations at a steady rate on the deployments of an actor of its own, so its feed holds
 * nothing else; each run.admitted is timed on the actor's WatchEvents stream (from cursor 0) and
 * on a NATS core subscription of the workspace's event subjects (what the relay published, which
 * also wakes the feed's sessions), both open at once over the same events. Two stretches on the
 * same stream: gRPC Activate through the door, spread over `tokens` tokens of the actor (every
 * call of a token is recorded on that token's stream, see benchOneToken), then the same
 * activations through the workspace API with the owner's API key, which costs the app less.
 */
async function benchWatch(app: App, options: PacketAdeOptions['watch']): Promise<PacketAdeResults['watch']> {
  const doors: GrpcDoor[] = [];
  for (let i = 0; i < options.tokens; i++) doors.push(await grpcDoor(app.grpcAddress, await issueToken(app, 'bench-watch')));
  const warmupCount = Math.round(options.ratePerSecond * options.warmupSeconds);
  const steadyCount = Math.round(options.ratePerSecond * options.seconds);
  const deployments = await deploy(doors[0]!, 'bench-watch', Math.max(4, Math.ceil((2 * (warmupCount + steadyCount) + options.slowCount + 20 * options.warmupSeconds) / (MAX_CONCURRENT_RUNS / 2))));

  // Arrival time and occurredAt of each run's run.admitted, by run id, on each path.
  const onWatch = new Map<string, { at: number; occurredAt: number }>();
  const onNats = new Map<string, { at: number; occurredAt: number }>();
  let duplicatesOnWatch = 0;
  let outOfOrderOnWatch = 0;
  let lastCursor = 0;
  let streamError: Error | null = null;
  const admittedRun = (type: string, stream: string) => (type === 'run.admitted' && stream.startsWith('run-') ? stream.slice(4) : null);

  const stream = doors[0]!.watch('0');
  stream.on('data', (event: FeedEventMessage) => {
    const at = now();
    const cursor = Number(event.cursor);
    if (cursor <= lastCursor) outOfOrderOnWatch++;
    lastCursor = cursor;
    const runId = admittedRun(event.type, event.stream);
    if (runId === null) return;
    if (onWatch.has(runId)) duplicatesOnWatch++;
    else onWatch.set(runId, { at, occurredAt: Date.parse(event.occurredAt) });
  });
  stream.on('error', (error: ServiceError) => {
    if (error.code !== GrpcStatus.CANCELLED) streamError = error;
  });
  const topo = topology(app.bus.prefix);
  const subscription: Subscription = app.bus.nc.subscribe(`${topo.eventsSubjectRoot}.${app.setup.workspaceId}.>`, {
    callback: (error, message) => {
      const at = now();
      if (error) return;
      const envelope = JSON.parse(message.string()) as { type: string; stream: string; occurredAt: string };
      const runId = admittedRun(envelope.type, envelope.stream);
      if (runId !== null && !onNats.has(runId)) onNats.set(runId, { at, occurredAt: Date.parse(envelope.occurredAt) });
    },
  });
  await app.bus.nc.flush();

  const arrived = (ids: Iterable<string>) => [...ids].every((id) => onWatch.has(id) && onNats.has(id));
  const stretch = async (producer: string, activations: SteadyActivations, rate = options.ratePerSecond, count = steadyCount): Promise<WatchStretch> => {
    // Warm-up, then until both paths have seen every warm-up event and the relay is idle.
    const warm = await activations.run(Math.round(rate * options.warmupSeconds), rate, 'warm');
    await until(() => streamError !== null || arrived(warm.returned.keys()), 'the warm-up events on the stream and the subscription', 60_000);
    if (streamError) throw streamError;
    await relayIdle(app);
    await app.db.pool.query('CHECKPOINT').catch(() => undefined);

    const rollbacksBefore = await rollbacks(app);
    const cpu = await cpuFrom(app);
    const { returned, failed } = await activations.run(count, rate, 'steady');
    // A lost event shows as received < activations in the results rather than failing the phase.
    await until(() => streamError !== null || arrived(returned.keys()), 'every steady event on the stream and the subscription', 30_000).catch(() => undefined);
    const loop = await eventLoopDelay(app);
    const use = await cpu();
    if (streamError) throw streamError;
    const rollbacksDuring = (await rollbacks(app)) - rollbacksBefore;
    await relayIdle(app);

    const lags = (seen: Map<string, { at: number; occurredAt: number }>, from: 'returned' | 'occurred') =>
      summarise([...returned].flatMap(([id, at]) => {
        const arrival = seen.get(id);
        return arrival ? [arrival.at - (from === 'returned' ? at : arrival.occurredAt)] : [];
      }));
    const ids = [...returned.keys()];
    return {
      producer,
      ratePerSecond: rate,
      activations: returned.size,
      watchMs: lags(onWatch, 'returned'),
      relayMs: lags(onNats, 'returned'),
      watchFromOccurredMs: lags(onWatch, 'occurred'),
      relayFromOccurredMs: lags(onNats, 'occurred'),
      activateMs: summarise(activations.activateMs),
      received: { watch: ids.filter((id) => onWatch.has(id)).length, relay: ids.filter((id) => onNats.has(id)).length },
      failedCalls: Object.fromEntries(failed),
      failedWarmupCalls: Object.fromEntries(warm.failed),
      rollbacks: rollbacksDuring,
      eventLoopDelayMs: loop,
      cpu: use,
    };
  };

  try {
    const viaDoor = await stretch(
      `gRPC Activate, ${doors.length} tokens`,
      new SteadyActivations((k, tag) => activateGrpc(doors[k % doors.length]!, deployments[k % deployments.length]!, tag)),
    );
    const workspaceApi = () =>
      new SteadyActivations((k, tag) =>
        activateRest(`${app.baseUrl}/api/v1/workspaces/${app.setup.workspaceId}/deployments/${deployments[k % deployments.length]!}/runs`, app.setup.apiKey, tag),
      );
    const viaWorkspace = await stretch('workspace API POST runs, owner API key', workspaceApi());
    // What the stream adds on a nearly idle app: one activation every 50 ms.
    const slow = await stretch('the same, 20 per second', workspaceApi(), 20, options.slowCount);
    return {
      deployments: deployments.length,
      tokens: doors.length,
      ratePerSecond: options.ratePerSecond,
      seconds: options.seconds,
      stretches: [viaDoor, viaWorkspace, slow],
      duplicatesOnWatch,
      outOfOrderOnWatch,
    };
  } finally {
    subscription.unsubscribe();
    stream.cancel();
    for (const door of doors) door.close();
  }
}

/**
 * The same steady gRPC activations, all with one token (as one PacketADE client makes them):
 * every call of a token is appended to the token's stream with expected version `any`, so calls
 * in flight together race for its head, and the event store retries the losers up to 10 times.
 */
async function benchOneToken(app: App, options: PacketAdeOptions['watch']): Promise<PacketAdeResults['oneToken']> {
  const token = await issueToken(app, 'bench-one-token');
  const tokenId = /^pade_([a-f0-9]{20})_/.exec(token)?.[1];
  if (!tokenId) throw new Error('an actor token without the expected pade_<id>_<secret> shape');
  const door = await grpcDoor(app.grpcAddress, token);
  try {
    const count = Math.round(options.ratePerSecond * options.seconds);
    const deployments = await deploy(door, 'bench-one-token', Math.max(2, Math.ceil(count / (MAX_CONCURRENT_RUNS / 2))));
    const activations = new SteadyActivations((k, tag) => activateGrpc(door, deployments[k % deployments.length]!, tag));
    const rollbacksBefore = await rollbacks(app);
    const cpu = await cpuFrom(app);
    const { returned, failed } = await activations.run(count, options.ratePerSecond, 'one');
    const use = await cpu();
    // What the calls left behind: the runs admitted, and the token's recorded calls.
    const { rows } = await app.db.pool.query<{ admitted: number; recorded: number }>(
      `SELECT (SELECT count(*)::int FROM events WHERE type = 'run.admitted' AND data->>'deploymentId' = ANY($1)) AS admitted,
              (SELECT count(*)::int FROM events WHERE type = 'packetade.actor_call_recorded' AND data->>'tokenId' = $2 AND data->>'operation' = 'activate') AS recorded`,
      [deployments, tokenId],
    );
    return {
      ratePerSecond: options.ratePerSecond,
      seconds: options.seconds,
      calls: count,
      answered: returned.size,
      admittedRuns: rows[0]!.admitted,
      recordedCalls: rows[0]!.recorded,
      activateMs: summarise(activations.activateMs),
      failedCalls: Object.fromEntries(failed),
      rollbacks: (await rollbacks(app)) - rollbacksBefore,
      cpu: use,
    };
  } finally {
    door.close();
  }
}

// ---------------------------------------------------------------------------------------------

export function printPacketAde({ activation, watch, oneToken }: PacketAdeResults): void {
  const cores = (cpu: CpuUse) => `${[cpu.machine, cpu.app, cpu.bench].map((x) => (x === null ? 'n/a' : x.toFixed(2))).join(' / ')} cores (machine / app / bench)`;
  const failures = (calls: Record<string, number>) => Object.entries(calls).map(([what, n]) => `${n} x ${what}`).join('; ') || 'none';
  process.stdout.write(
    `\n(p) PacketADE activation, one call at a time: ${activation.grpc.count} rounds (gRPC, REST and the workspace API on the same deployment, random order in each round) ` +
      `over ${activation.deployments} deployments, after ${activation.verified.checkedRightAfterAnswer / PATHS.length} warm-up rounds\n`,
  );
  process.stdout.write(
    `${table(
      ['path', 'p50 ms', 'p99 ms', 'max ms', 'count', 'p50 vs REST', 'p99 vs REST'],
      [
        ['gRPC Activate -> answer (run.admitted committed)', activation.grpc.p50, activation.grpc.p99, activation.grpc.max, activation.grpc.count, ratio(activation.grpc.p50, activation.rest.p50), ratio(activation.grpc.p99, activation.rest.p99)],
        ['REST POST packetade runs -> 201 (run.admitted committed)', activation.rest.p50, activation.rest.p99, activation.rest.max, activation.rest.count, '1.00x', '1.00x'],
        ['REST POST workspace runs, owner API key, no door -> 201', activation.workspace.p50, activation.workspace.p99, activation.workspace.max, activation.workspace.count, ratio(activation.workspace.p50, activation.rest.p50), ratio(activation.workspace.p99, activation.rest.p99)],
        ['gRPC Inspect -> answer', activation.inspectGrpc.p50, activation.inspectGrpc.p99, activation.inspectGrpc.max, activation.inspectGrpc.count, ratio(activation.inspectGrpc.p50, activation.inspectRest.p50), ratio(activation.inspectGrpc.p99, activation.inspectRest.p99)],
        ['REST GET packetade deployment -> 200', activation.inspectRest.p50, activation.inspectRest.p99, activation.inspectRest.max, activation.inspectRest.count, '1.00x', '1.00x'],
      ],
    )}\n`,
  );
  process.stdout.write(
    `activations measured at ${cores(activation.cpu)}, ${activation.transactionsPerActivation.toFixed(1)} database transactions per activation; ${activation.verified.runs} activations answered, ` +
      `${activation.verified.admittedEvents} run.admitted events exist for them, ${activation.verified.checkedRightAfterAnswer} looked up as soon as their answer arrived\n`,
  );
  process.stdout.write(
    `\n(p) PacketADE WatchEvents (cursor 0) and a NATS core subscription of the workspace's event subjects, open together: ${watch.ratePerSecond} activations/s for ${watch.seconds} s ` +
      `over ${watch.deployments} deployments of one actor, each producer in turn, then 20/s; run.admitted from the activation call returning to its arrival\n`,
  );
  process.stdout.write(
    `${table(
      ['producer', 'per s', 'path', 'p50 ms', 'p99 ms', 'max ms', 'received', 'p50 from occurredAt', 'p99 from occurredAt', 'p99 watch - p99 relay'],
      watch.stretches.flatMap((w) => [
        [w.producer, w.ratePerSecond, 'gRPC WatchEvents', w.watchMs.p50, w.watchMs.p99, w.watchMs.max, `${w.received.watch}/${w.activations}`, w.watchFromOccurredMs.p50, w.watchFromOccurredMs.p99, (w.watchMs.p99 - w.relayMs.p99).toFixed(2)],
        ['', '', 'NATS core subscription', w.relayMs.p50, w.relayMs.p99, w.relayMs.max, `${w.received.relay}/${w.activations}`, w.relayFromOccurredMs.p50, w.relayFromOccurredMs.p99, ''],
      ]),
    )}\n`,
  );
  for (const w of watch.stretches) {
    process.stdout.write(
      `${w.producer}: activation p50 ${w.activateMs.p50.toFixed(2)} ms, p99 ${w.activateMs.p99.toFixed(2)} ms; ${w.rollbacks} transactions rolled back; ` +
        `event-loop delay beyond 10 ms ticks p50 ${w.eventLoopDelayMs.p50.toFixed(1)} ms, p99 ${w.eventLoopDelayMs.p99.toFixed(1)} ms, max ${w.eventLoopDelayMs.max.toFixed(1)} ms; ${cores(w.cpu)}; ` +
        `failed calls: warm-up ${failures(w.failedWarmupCalls)}, measured ${failures(w.failedCalls)}\n`,
    );
  }
  process.stdout.write(`${watch.duplicatesOnWatch} duplicates and ${watch.outOfOrderOnWatch} out of order on the stream\n`);
  process.stdout.write(`\n(p) the same ${oneToken.ratePerSecond} gRPC activations/s for ${oneToken.seconds} s with one token (every call recorded on that token's stream)\n`);
  process.stdout.write(
    `${table(
      ['path', 'calls', 'answered', 'runs admitted', 'calls recorded', 'p50 ms', 'p99 ms', 'max ms', 'rolled back'],
      [['gRPC Activate, one token', oneToken.calls, oneToken.answered, oneToken.admittedRuns, oneToken.recordedCalls, oneToken.activateMs.p50, oneToken.activateMs.p99, oneToken.activateMs.max, oneToken.rollbacks]],
    )}\n`,
  );
  process.stdout.write(`failed: ${failures(oneToken.failedCalls)}; ${cores(oneToken.cpu)}\n`);
}
