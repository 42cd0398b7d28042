/**
 * `npm run bench`: the event store against a raw INSERT, the relay against direct nats.js
 * publishes, run admission through the compiled app against graphile-worker, budget
 * reservations through the compiled app against a bare UPDATE of one row, tool-call
 * authorisation through the compiled app against a bare NATS echo, and run execution by the
 * compiled app's supervisors against a single commit and graphile-worker, in the same run on the
 * same database server and NATS, and commands through the sandbox service against a bare
 * spawn, and the PacketADE door's gRPC activation and WatchEvents against its REST activation
 * and the relay's NATS subjects. PACKETAGENT_BENCH_PHASES=execution (comma-separated) runs some
 * phases only. Prints tables and writes JSON to tools/bench/results/.
 */
import { benchNotifications, printNotifications } from './notifications.bench';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { topology, type Topology } from '@packetagent/bus';
import { createTestBus, createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { benchAdmission, type AdmissionResults } from './admission.bench';
import type { CpuUse } from './app-process';
import { benchAuthorize, type AuthorizeResults } from './authorize.bench';
import { benchBudget, type BudgetResults } from './budget.bench';
import { benchRawInsert, benchStoreAppend, createRawTable, type AppendCase, type AppendResult } from './append.bench';
import { benchExecution, type ExecutionResults, type Timing } from './execution.bench';
import { hopTables } from './hops';
import type { CpuWithServers } from './server-cpu';
import { benchOperations, printOperations } from './operations.bench';
import { benchDirectPublishLag, benchDirectPublishRate, benchRelayDrain, benchRelayLag } from './relay.bench';
import { benchComputers, printComputers } from './computers.bench';
import { benchConsole, printConsole } from './console.bench';
import { benchMcp, printMcp } from './mcp.bench';
import { benchPacketAde, printPacketAde } from './packetade.bench';
import { benchSandbox, printSandbox } from './sandbox.bench';
import { ratio, table } from './stats';

const quick = process.env['PACKETAGENT_BENCH_QUICK'] === '1';
const scale = quick ? 0.1 : 1;

async function withFresh<T>(fn: (fresh: { db: TestDatabase; nc: NatsConnection; topo: Topology }) => Promise<T>): Promise<T> {
  const db = await createTestDatabase({ max: 40 });
  // Flush what earlier phases left dirty, so their write-back does not land in this one
  // (needs superuser or pg_checkpoint; skipped otherwise).
  await db.pool.query('CHECKPOINT').catch(() => undefined);
  const bus = await createTestBus();
  try {
    return await fn({ db, nc: bus.nc, topo: topology(bus.prefix) });
  } finally {
    await bus.cleanup();
    await db.drop();
  }
}

/** Phases in the order they run; PACKETAGENT_BENCH_PHASES (comma-separated) selects some of them. */
const PHASES = ['append', 'relay', 'admission', 'budget', 'authorize', 'execution', 'operations', 'sandbox', 'computers', 'mcp', 'packetade', 'notifications', 'console'] as const;
type Phase = (typeof PHASES)[number];

function selectedPhases(): Set<Phase> {
  const raw = process.env['PACKETAGENT_BENCH_PHASES']?.trim();
  if (!raw) return new Set(PHASES);
  const names = raw.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(PHASES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`PACKETAGENT_BENCH_PHASES names unknown phases (${unknown.join(', ')}); the phases are ${PHASES.join(', ')}`);
  return new Set(names as Phase[]);
}

async function benchAppend(): Promise<{ ours: AppendResult; raw: AppendResult }[]> {
  const db = await createTestDatabase({ max: 24 });
  try {
    await createRawTable(db.pool);
    const cases: AppendCase[] = [
      { clients: 1, eventsPerAppend: 1, appendsPerClient: Math.round(3_000 * scale) },
      { clients: 16, eventsPerAppend: 1, appendsPerClient: Math.round(400 * scale) },
      { clients: 1, eventsPerAppend: 100, appendsPerClient: Math.round(300 * scale) },
      { clients: 16, eventsPerAppend: 100, appendsPerClient: Math.round(40 * scale) },
    ];
    const append: { ours: AppendResult; raw: AppendResult }[] = [];
    for (const [index, spec] of cases.entries()) {
      // Warm both paths, then alternate raw / ours so drift affects them alike.
      await benchRawInsert(db.pool, { ...spec, appendsPerClient: Math.max(5, Math.round(spec.appendsPerClient / 10)) }, `warm${index}`);
      await benchStoreAppend(db.pool, { ...spec, appendsPerClient: Math.max(5, Math.round(spec.appendsPerClient / 10)) }, `warm${index}`);
      const raw = await benchRawInsert(db.pool, spec, `c${index}`);
      const ours = await benchStoreAppend(db.pool, spec, `c${index}`);
      append.push({ ours, raw });
    }
    return append;
  } finally {
    await db.drop();
  }
}

async function main(): Promise<void> {
  const phases = selectedPhases();
  const results: Record<string, unknown> = { at: new Date().toISOString(), quick, node: process.version, phases: [...phases] };
  const seconds = quick ? 2 : 10;

  let append: { ours: AppendResult; raw: AppendResult }[] | null = null;
  if (phases.has('append')) {
    append = await benchAppend();
    results['append'] = append;
    process.stdout.write('\n(a) append: event store vs raw INSERT of the same rows (same database)\n');
    process.stdout.write(
      `${table(
        ['clients', 'events/append', 'store p50 ms', 'raw p50 ms', 'p50 ratio', 'store p99 ms', 'raw p99 ms', 'store ev/s', 'raw ev/s', 'throughput ratio'],
        append.map(({ ours, raw }) => [
          ours.case.clients, ours.case.eventsPerAppend, ours.latencyMs.p50, raw.latencyMs.p50, ratio(ours.latencyMs.p50, raw.latencyMs.p50),
          ours.latencyMs.p99, raw.latencyMs.p99, ours.eventsPerSecond, raw.eventsPerSecond, ratio(ours.eventsPerSecond, raw.eventsPerSecond),
        ]),
      )}\n`,
    );
  }

  if (phases.has('relay')) {
    const drainCount = quick ? 8_000 : 48_000;
    // Each relay measurement starts from an empty store and its own stream.
    const relayLag = await withFresh((fresh) => benchRelayLag(fresh.db.pool, fresh.nc, fresh.topo, fresh.db.url, 1_000, seconds));
    const directLag = await withFresh((fresh) => benchDirectPublishLag(fresh.nc, fresh.topo, 1_000, seconds));
    const relayDrain = await withFresh((fresh) => benchRelayDrain(fresh.db.pool, fresh.nc, fresh.topo, fresh.db.url, drainCount));
    const directRate = await withFresh((fresh) => benchDirectPublishRate(fresh.nc, fresh.topo, drainCount));
    Object.assign(results, { relayLag, directLag, relayDrain, directRate });
    // The append phase's rates, when it ran in the same invocation.
    const storeRate = append ? Math.max(...append.map((a) => a.ours.eventsPerSecond)) : Number.NaN;
    const storeSingle = append?.find((a) => a.ours.case.clients === 16 && a.ours.case.eventsPerAppend === 1)?.ours.eventsPerSecond ?? Number.NaN;

    process.stdout.write(`\n(b) relay lag at a steady ${relayLag.ratePerSecond} events/s for ${seconds} s\n`);
    process.stdout.write(
      `${table(['path', 'p50 ms', 'p99 ms', 'max ms', 'events'], [relayLag, directLag].map((r) => [r.kind, r.lagMs.p50, r.lagMs.p99, r.lagMs.max, r.lagMs.count]))}\n`,
    );
    process.stdout.write(`\n(b) sustained rate (${drainCount} events)\n`);
    process.stdout.write(
      `${table(['path', 'events/s', 'vs direct publish', 'vs store 16x1 append', 'vs store best append'], [
        [relayDrain.kind, relayDrain.eventsPerSecond, ratio(relayDrain.eventsPerSecond, directRate.eventsPerSecond), ratio(relayDrain.eventsPerSecond, storeSingle), ratio(relayDrain.eventsPerSecond, storeRate)],
        [directRate.kind, directRate.eventsPerSecond, '1.00x', '', ''],
      ])}\n`,
    );
  }

  if (phases.has('admission')) {
    const admission = await benchAdmission({
      ratePerSecond: 100,
      warmupSeconds: quick ? 1 : 2,
      seconds,
      clients: 16,
      saturationCount: Math.round(2_000 * scale),
      breakdownSamples: Math.round(300 * scale),
    });
    results['admission'] = admission;
    printAdmission(admission);
  }

  if (phases.has('budget')) {
    const budget = await benchBudget({
      clients: 16,
      reservationsPerClient: Math.round(150 * scale),
      updatesPerClient: Math.round(750 * scale),
      warmupPerClient: Math.round(20 * scale),
    });
    results['budget'] = budget;
    printBudget(budget);
  }

  if (phases.has('authorize')) {
    const authorize = await benchAuthorize({
      warmup: Math.round(200 * scale),
      sequential: Math.round(1_000 * scale),
      clients: 16,
      saturationCount: Math.round(4_000 * scale),
    });
    results['authorize'] = authorize;
    printAuthorize(authorize);
  }

  if (phases.has('execution')) {
    const execution = await benchExecution({
      steps: { warmupRuns: 1, runs: quick ? 2 : 10, stepsPerRun: quick ? 20 : 40, commits: Math.round(2_000 * scale) },
      throughput: { clients: quick ? 16 : 32, warmup: Math.round(200 * scale), runs: Math.round(1_000 * scale), oneAtATime: quick ? 5 : 30, baselineJobs: Math.round(3_000 * scale) },
      recovery: {
        repeats: quick ? 2 : 5,
        // The defaults, then a short lease; the quick run only the short one.
        settings: [...(quick ? [] : [{ leaseMs: 15_000, recoveryIntervalMs: 5_000 }]), { leaseMs: 2_000, recoveryIntervalMs: 250 }],
      },
      claimToModel: { warmupRuns: 3, runs: quick ? 20 : 50, newDeploymentRuns: quick ? 10 : 20 },
    });
    results['execution'] = execution;
    printExecution(execution);
  }

  if (phases.has('operations')) {
    const operations = await benchOperations({
      replayEvents: Math.round(20_000 * scale),
      historyRuns: 8,
      sse: { clients: 100, ratePerSecond: 200, warmupSeconds: quick ? 1 : 2, seconds },
    });
    results['operations'] = operations;
    printOperations(operations);
  }

  if (phases.has('sandbox')) {
    const sandbox = await benchSandbox({ warmup: quick ? 5 : 20, count: quick ? 30 : 200 });
    results['sandbox'] = sandbox;
    printSandbox(sandbox);
  }

  if (phases.has('computers')) {
    const computers = await benchComputers({ warmup: quick ? 5 : 20, count: quick ? 30 : 200 });
    results['computers'] = computers;
    printComputers(computers);
  }

  if (phases.has('mcp')) {
    const mcp = await benchMcp({ warmup: quick ? 5 : 50, count: quick ? 30 : 500 });
    results['mcp'] = mcp;
    printMcp(mcp);
  }

  if (phases.has('packetade')) {
    const packetade = await benchPacketAde({
      activation: { warmup: quick ? 20 : 100, count: quick ? 50 : 500 },
      watch: { ratePerSecond: 100, warmupSeconds: quick ? 1 : 2, seconds: quick ? 2 : 10, tokens: 16, slowCount: quick ? 40 : 200 },
    });
    results['packetade'] = packetade;
    printPacketAde(packetade);
  }

  if (phases.has('notifications')) {
    // The goal's rate, then a fifth of it: how much of the gap is load.
    const notifications = await benchNotifications({ ratePerSecond: 100, warmup: quick ? 100 : 200, count: quick ? 200 : 1_000 });
    const slower = await benchNotifications({ ratePerSecond: 20, warmup: quick ? 20 : 40, count: quick ? 40 : 200 });
    results['notifications'] = { at100: notifications, at20: slower };
    printNotifications(notifications);
    printNotifications(slower);
  }

  if (phases.has('console')) {
    const consoleResults = await benchConsole({ samples: quick ? 3 : 15 });
    results['console'] = consoleResults;
    printConsole(consoleResults);
  }


  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  // A run of some phases says which in its name, so it is not taken for a full one.
  const only = phases.size < PHASES.length ? `-${[...phases].join('-')}` : '';
  const file = join(dir, `bench-${String(results['at']).replace(/[:.]/g, '-')}${only}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2));
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(results, null, 2));
  process.stdout.write(`\nwrote ${file}\n`);
}

// Average cores busy during the phase: the whole machine, the app's process, the benchmark's own.
const CPU_HEADERS = ['machine cores', 'app cores', 'bench cores'];
const cpuCells = (cpu: CpuUse): (string | number)[] => [cpu.machine ?? 'n/a', cpu.app ?? '', cpu.bench];

function printAdmission(admission: AdmissionResults): void {
  const { steady, saturation } = admission;
  process.stdout.write(
    `\n(c) admission at a steady ${steady.ratePerSecond} activations/s for ${steady.seconds} s, spread over ${admission.deployments} deployments\n`,
  );
  process.stdout.write(
    `${table(
      ['path', 'p50 ms', 'p99 ms', 'max ms', 'count', 'p50 vs addJob->start', 'p99 vs addJob->start', ...CPU_HEADERS],
      [
        ['ours: POST runs -> 201 (run.admitted committed)', steady.ours.p50, steady.ours.p99, steady.ours.max, steady.ours.count, ratio(steady.ours.p50, steady.baseline.p50), ratio(steady.ours.p99, steady.baseline.p99), ...cpuCells(steady.cpu.ours)],
        ['graphile-worker: addJob -> task start', steady.baseline.p50, steady.baseline.p99, steady.baseline.max, steady.baseline.count, '1.00x', '1.00x', ...cpuCells(steady.cpu.baseline)],
        ['graphile-worker: addJob -> returned (committed)', steady.baselineAddJob.p50, steady.baselineAddJob.p99, steady.baselineAddJob.max, steady.baselineAddJob.count, '', '', '', '', ''],
      ],
    )}\n`,
  );
  process.stdout.write(`\n(c) admission at saturation: ${saturation.ours.clients} closed-loop clients\n`);
  process.stdout.write(
    `${table(
      ['path', 'deployments', 'operations', 'per s', 'vs baseline', 'p50 ms', 'p99 ms', ...CPU_HEADERS],
      [saturation.ours, saturation.oursOneDeployment, saturation.baseline].map((r) => [
        r.kind, r.deployments ?? '', r.count, r.perSecond, ratio(r.perSecond, saturation.baseline.perSecond), r.latencyMs.p50, r.latencyMs.p99, ...cpuCells(r.cpu),
      ]),
    )}\n`,
  );
  process.stdout.write('\n(c) where an activation spends its time: one request at a time, idle system\n');
  process.stdout.write(`${table(['request', 'p50 ms', 'p99 ms', 'count'], admission.breakdown.map((b) => [b.kind, b.latencyMs.p50, b.latencyMs.p99, b.latencyMs.count]))}\n`);
  const { verified } = admission;
  process.stdout.write(
    `\n${verified.created} activations answered 201 and ${verified.admittedEvents} run.admitted events exist for them; ` +
      `${verified.checkedRightAfterResponse} were looked up as soon as their 201 arrived\n`,
  );
}

function printBudget(budget: BudgetResults): void {
  const { single, hot, spread, baseline } = budget;
  process.stdout.write(
    `\n(d) budget reservations: closed-loop clients over NATS, each reservation (${budget.reserveMicroUsd} micro-USD) settled right after; ` +
      'every run of the workspace shares its workspace scope\n',
  );
  process.stdout.write(
    `${table(
      ['path', 'clients', 'runs', 'operations', 'reservations/s', 'vs bare UPDATE', 'reserve p50 ms', 'reserve p99 ms', 'settle p50 ms', 'settle p99 ms', ...CPU_HEADERS],
      [hot, spread, single, baseline].map((r) => [
        r.kind, r.clients, r.runs ?? '', r.count, r.perSecond, r === single ? '' : ratio(r.perSecond, baseline.perSecond), r.reserveMs.p50, r.reserveMs.p99, r.settleMs?.p50 ?? '', r.settleMs?.p99 ?? '', ...cpuCells(r.cpu),
      ]),
    )}\n`,
  );
  process.stdout.write(`bare NATS request/reply from the benchmark (echo, one at a time): p50 ${budget.natsEchoMs.p50.toFixed(2)} ms, p99 ${budget.natsEchoMs.p99.toFixed(2)} ms\n`);
  const { verified } = budget;
  process.stdout.write(
    `\n${verified.reservations} reservations in the ledger, ${verified.settled} settled; ${verified.reservedEvents} budget.reserved and ${verified.settledEvents} budget.settled events\n`,
  );
}

function printAuthorize(authorize: AuthorizeResults): void {
  const { sequential, saturation } = authorize;
  process.stdout.write(
    `\n(e) authorize: an allowed http_fetch GET over NATS (${authorize.payloadBytes}-byte request), one at a time, ` +
      'against a bare NATS request/reply echo of the same payload from the same process\n',
  );
  process.stdout.write(
    `${table(
      ['path', 'count', 'p50 ms', 'p99 ms', 'max ms', 'p50 vs echo', 'p99 vs echo', ...CPU_HEADERS],
      [
        ['authorize -> allow (policy.decided committed)', sequential.authorize, sequential.cpu.authorize] as const,
        ['bare NATS request/reply (echo)', sequential.echo, sequential.cpu.echo] as const,
      ].map(([kind, s, cpu]) => [kind, s.count, s.p50, s.p99, s.max, ratio(s.p50, sequential.echo.p50), ratio(s.p99, sequential.echo.p99), ...cpuCells(cpu)]),
    )}\n`,
  );
  process.stdout.write(`\n(e) authorize at saturation: ${saturation.echo.clients} closed-loop clients\n`);
  process.stdout.write(
    `${table(
      ['path', 'runs', 'answered', 'failed', 'per s', 'vs echo', 'p50 ms', 'p99 ms', 'p50 vs echo', 'p99 vs echo', ...CPU_HEADERS],
      [saturation.spread, saturation.hot, saturation.echo].map((r) => [
        r.kind, r.runs ?? '', r.count, Object.entries(r.failed).map(([code, n]) => `${n} ${code}`).join(', ') || 0, r.perSecond, ratio(r.perSecond, saturation.echo.perSecond),
        r.latencyMs.p50, r.latencyMs.p99, ratio(r.latencyMs.p50, saturation.echo.latencyMs.p50), ratio(r.latencyMs.p99, saturation.echo.latencyMs.p99), ...cpuCells(r.cpu),
      ]),
    )}\n`,
  );
  process.stdout.write(`\n${authorize.verified.answered} calls answered (measured, warm-up and readiness probes) and ${authorize.verified.decidedEvents} policy.decided events exist\n`);
}

// Other cores: the machine less the processes accounted for; anything else on the host shows there.
/** Write transactions from the WAL, largest groups first. */
function walLine(writes: { transactions: number; byTables: Record<string, number> } | null): string {
  if (!writes) return 'n/a (pg_walinspect not available)';
  const groups = Object.entries(writes.byTables).sort((a, b) => b[1] - a[1]).map(([tables, n]) => `${n.toFixed(2)} ${tables}`);
  return `${writes.transactions.toFixed(2)} (${groups.join(', ')})`;
}

const EXECUTION_CPU_HEADERS = [...CPU_HEADERS, 'postgres cores', 'nats cores', 'other cores'];
const executionCpuCells = (cpu: CpuWithServers): (string | number)[] => {
  const other = cpu.machine === null || cpu.postgres === null || cpu.nats === null ? 'n/a' : Math.max(0, cpu.machine - (cpu.app ?? 0) - cpu.bench - cpu.postgres - cpu.nats);
  return [...cpuCells(cpu), cpu.postgres ?? 'n/a', cpu.nats ?? 'n/a', other];
};

function printExecution(execution: ExecutionResults): void {
  const { steps, throughput, recovery } = execution;
  const commit = steps.commitMs;
  const row = (kind: string, t: Timing, times = 1): (string | number)[] => [
    kind, t.count, t.p50, t.p99, t.mean, ratio(t.p50, commit.p50 * times), ratio(t.p99, commit.p99 * times), ratio(t.mean, commit.mean * times),
  ];
  process.stdout.write(
    `\n(f) execution: ${steps.free.runs} runs of ${steps.stepsPerRun} scripted update_criteria steps per pricing, one run at a time, timed by their events; ` +
      `baseline: one INSERT + COMMIT of a ${steps.checkpointCommitBytes}-byte row (synchronous_commit ${steps.database.synchronousCommit}, fsync ${steps.database.fsync})\n`,
  );
  process.stdout.write(
    `${table(
      ['interval', 'count', 'p50 ms', 'p99 ms', 'mean ms', 'p50 vs commit', 'p99 vs commit', 'mean vs commit'],
      [
        ...[steps.free, steps.priced].flatMap((v) => [
          row(`${v.pricing}: per checkpoint (any to the next)`, v.perCheckpointMs),
          row(`${v.pricing}:   to a model turn checkpoint (plan)`, v.planCheckpointMs),
          row(`${v.pricing}:   to a tool result checkpoint (act)`, v.actCheckpointMs),
          row(`${v.pricing}: per step (vs two commits)`, v.perStepMs, 2),
          row(`${v.pricing}: per step less the scripted model call (vs two commits)`, v.perStepLessModelMs, 2),
        ]),
        row('baseline: INSERT + COMMIT', commit),
      ],
    )}\n`,
  );
  for (const v of [steps.free, steps.priced]) {
    process.stdout.write(`\n(f) a ${v.pricing} step cut at its events (each part starts with the commit of the event named first)\n`);
    process.stdout.write(
      `${table(['part', 'p50 ms', 'p99 ms', 'mean ms'], [...v.parts.map((part) => [part.kind, part.ms.p50, part.ms.p99, part.ms.mean]), ['scripted model call (router durationMs)', v.modelCallMs.p50, v.modelCallMs.p99, v.modelCallMs.mean]])}\n`,
    );
    const tx = v.transactionsPerStep;
    const perTurn = (ms: number | null) => (ms === null ? 'n/a' : `${ms.toFixed(1)} ms`);
    process.stdout.write(
      `transactions per step that wrote events: ${tx.runStream.toFixed(2)} on the run's stream (${tx.withCheckpoint.toFixed(2)} with a checkpoint), ` +
        `${tx.budget.toFixed(2)} in the budget ledger; mean step ${v.firstQuarterStepMs.toFixed(2)} ms in the first quarter of a run, ${v.lastQuarterStepMs.toFixed(2)} ms in the last; ` +
        `CPU per model turn: machine ${perTurn(v.cpuMsPerTurn.machine)}, app ${perTurn(v.cpuMsPerTurn.app)}, postgres ${perTurn(v.cpuMsPerTurn.postgres)}\n`,
    );
    process.stdout.write(`every write transaction per model turn, from the WAL (each a synchronous commit): ${walLine(v.writesPerTurn)}\n`);
  }
  process.stdout.write(
    `${table(['path', ...EXECUTION_CPU_HEADERS], [
      ['free runs (one app process)', ...executionCpuCells(steps.free.cpu)],
      ['priced runs (one app process)', ...executionCpuCells(steps.priced.cpu)],
      ['baseline commits', ...executionCpuCells(steps.baselineCpu)],
    ])}\n`,
  );

  const { ours, baseline } = throughput;
  process.stdout.write(`\n(f) free no-op runs per second: ${ours.clients} closed-loop clients, first start to last terminal event\n`);
  process.stdout.write(
    `${table(
      ['path', 'count', 'seconds', 'per s', 'vs baseline', 'loop p50 ms', 'loop p99 ms', 'machine CPU ms per run', 'app CPU ms per run', ...EXECUTION_CPU_HEADERS],
      [ours, baseline].map((r) => [
        r.kind, r.count, r.seconds, r.perSecond, ratio(r.perSecond, baseline.perSecond), r.loopMs.p50, r.loopMs.p99,
        r.cpu.machine === null ? 'n/a' : (r.cpu.machine * 1_000) / r.perSecond, r.cpu.app === null ? '' : (r.cpu.app * 1_000) / r.perSecond, ...executionCpuCells(r.cpu),
      ]),
    )}\n`,
  );
  process.stdout.write(
    `ours: run.admitted -> terminal p50 ${ours.admittedToTerminalMs.p50.toFixed(1)} ms, p99 ${ours.admittedToTerminalMs.p99.toFixed(1)} ms; ` +
      `runs claimed per supervisor: ${ours.runsByReplica.join(' / ')}; baseline: ${baseline.runners} runners x concurrency ${baseline.concurrencyPerRunner}\n`,
  );
  process.stdout.write(`write transactions per run, from the WAL: ${walLine(ours.writesPerRun)}\nwrite transactions per graphile-worker job: ${walLine(baseline.writesPerJob)}\n`);
  for (const alone of ours.oneAtATime) {
    process.stdout.write(`\n(f) a ${alone.pricing} no-op run alone (${alone.count} runs one at a time), cut at the events it writes; POST -> 201 p50 ${alone.admissionMs.p50.toFixed(2)} ms\n`);
    process.stdout.write(
      `${table(['part', 'p50 ms', 'p99 ms', 'mean ms'], [...alone.parts.map((part) => [part.kind, part.ms.p50, part.ms.p99, part.ms.mean]), ['run.admitted -> run.succeeded', alone.totalMs.p50, alone.totalMs.p99, alone.totalMs.mean]])}\n`,
    );
  }

  const hops = execution.claimToModel;
  process.stdout.write(
    `\n(f) no-op runs alone, one at a time, on one app process whose Postgres connections go through a proxy in the benchmark: SQL statements ('Q' and 'E') and NATS messages, ` +
      `mean per run; the first model call starts at the run's next hop (free: the run.model_turn append; priced: the budget.settle request) less its durationMs; ` +
      `"new deployment": each run the first of its deployment on the process (its effective definition not cached); ${hops.statementsSeen} statements and ${hops.messagesSeen} messages seen in all\n`,
  );
  process.stdout.write(`${hopTables(hops.variants)}\n`);

  process.stdout.write('\n(f) recovery: SIGKILL of the process holding a run mid model call, until the other process claims and finishes it\n');
  process.stdout.write(
    `${table(
      ['lease ms', 'sweep ms', 'rounds', 'kill -> claimed p50 ms', 'max ms', 'kill -> terminal p50 ms', 'max ms', 'lease left at kill (ms)', 'claimed after lapse (ms)', 'goal: lease + 1 s'],
      recovery.map((r) => [
        r.leaseMs, r.recoveryIntervalMs, r.samples.length, r.claimedMs.p50, r.claimedMs.max, r.terminalMs.p50, r.terminalMs.max,
        r.samples.map((x) => Math.round(x.leaseLeftMs)).join(' '), r.samples.map((x) => Math.round(x.claimedAfterLapseMs)).join(' '),
        r.claimedMs.max <= r.leaseMs + 1_000 ? 'met' : 'not met',
      ]),
    )}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
