/**
 * The compiled all-in-one app as a child process (or several on shared infrastructure, as
 * replicas), for the phases that measure it through its public interfaces, and what those phases
 * share: closed-loop clients and CPU accounting.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createTestBus,
  createTestDatabase,
  createTestRedis,
  eventually,
  freePort,
  startServerProcess,
  testEnv,
  type ServerProcess,
  type TestBus,
  type TestDatabase,
  type TestRedis,
} from '@packetagent/testing';
import { now } from './stats';

export const ROOT = resolve(__dirname, '../../..');
const ENTRY = join(ROOT, 'dist/services/all-in-one/src/main.js');

/** `clients` loops, each starting its next operation when its previous one finished, until `count` were started. */
export async function closedLoop(clients: number, count: number, op: (k: number) => Promise<number>): Promise<{ latencies: number[]; seconds: number }> {
  let issued = 0;
  const latencies: number[] = [];
  const started = now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (issued < count) latencies.push(await op(issued++));
    }),
  );
  return { latencies, seconds: (now() - started) / 1_000 };
}

/** Average cores busy during a phase: the whole machine, the app's process, this process. */
export interface CpuUse {
  machine: number | null;
  app: number | null;
  bench: number;
}

// ---------------------------------------------------------------------------------------------
// The compiled all-in-one app as a child process.

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules') continue;
    const path = join(dir, entry);
    // Files come and go while others edit the tree.
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) newest = Math.max(newest, newestSourceMtime(path));
    else if ((/\.ts$/.test(entry) && !/\.(spec|testkit)\.ts$/.test(entry)) || entry.endsWith('.sql')) newest = Math.max(newest, stat.mtimeMs);
  }
  return newest;
}

/** Builds dist/ unless it is newer than every source it is compiled from. */
function ensureBuilt(): void {
  const built = existsSync(ENTRY) ? statSync(ENTRY).mtimeMs : 0;
  const sources = Math.max(...['libs', 'services', 'tools/cli/src'].map((dir) => newestSourceMtime(join(ROOT, dir))));
  if (built > sources) return;
  process.stdout.write('dist/ is older than the sources: building it (node tools/dev/build.mjs)\n');
  const build = spawnSync(process.execPath, [join(ROOT, 'tools/dev/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`the build failed with exit code ${String(build.status)}`);
}

export interface Answer<T> {
  status: number;
  body: T;
}

export interface App {
  baseUrl: string;
  /** The PacketADE gRPC port, host:port. */
  grpcAddress: string;
  db: TestDatabase;
  bus: TestBus;
  /** The owner's workspace and API key, from first-run setup. */
  setup: { workspaceId: string; apiKey: string };
  stop(): Promise<void>;
}

export async function request<T>(url: string, method: string, options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

/** Postgres, NATS and Redis for app processes, shared by them as replicas of one deployment share them. */
export interface Infrastructure {
  /** Empty when created: the first app process migrates it, as in production. */
  db: TestDatabase;
  bus: TestBus;
  redis: TestRedis;
  dataDir: string;
  setupToken: string;
  cleanup(): Promise<void>;
}

export async function startInfrastructure(): Promise<Infrastructure> {
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
  };
  try {
    const db = await createTestDatabase({ empty: true });
    cleanups.push(() => db.drop());
    const bus = await createTestBus();
    cleanups.push(() => bus.cleanup());
    const redis = await createTestRedis();
    cleanups.push(() => redis.cleanup());
    const dataDir = mkdtempSync(join(tmpdir(), 'pa-bench-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    return { db, bus, redis, dataDir, setupToken: randomBytes(24).toString('base64url'), cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** One compiled app process on shared infrastructure. */
export interface AppProcess extends ServerProcess {
  name: string;
  baseUrl: string;
  /** The PacketADE gRPC port, host:port. */
  grpcAddress: string;
}

let builtChecked = false;

/** Starts the compiled app on `infra` with `env` on top of the defaults, and waits until it is ready. */
export async function spawnApp(infra: Infrastructure, name: string, env: Record<string, string> = {}): Promise<AppProcess> {
  if (!builtChecked) {
    ensureBuilt();
    builtChecked = true;
  }
  const port = await freePort();
  const grpcPort = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const started = await startServerProcess({
    name,
    entry: ENTRY,
    cwd: ROOT,
    readyUrl: `${baseUrl}/readyz`,
    env: {
      ...process.env,
      PACKETAGENT_PORT: String(port),
      PACKETAGENT_GRPC_PORT: String(grpcPort),
      PACKETAGENT_DATABASE_URL: infra.db.url,
      PACKETAGENT_DATABASE_POOL_SIZE: '20',
      PACKETAGENT_NATS_URL: testEnv.natsUrl,
      PACKETAGENT_BUS_PREFIX: infra.bus.prefix,
      PACKETAGENT_REDIS_URL: infra.redis.url,
      PACKETAGENT_REDIS_KEY_PREFIX: infra.redis.keyPrefix,
      PACKETAGENT_DATA_DIR: infra.dataDir,
      PACKETAGENT_SETUP_TOKEN: infra.setupToken,
      PACKETAGENT_LOG_FORMAT: 'json',
      ...env,
    },
  });
  return { name, baseUrl, grpcAddress: `127.0.0.1:${env['PACKETAGENT_GRPC_PORT'] ?? grpcPort}`, ...started };
}

/** First-run setup: the owner's workspace and API key. */
export async function firstRunSetup(baseUrl: string, setupToken: string): Promise<{ workspaceId: string; apiKey: string }> {
  const setup = await request<{ workspaceId: string; apiKey: string }>(`${baseUrl}/api/v1/setup`, 'POST', {
    body: { token: setupToken, email: 'bench@example.com', password: randomBytes(18).toString('base64url'), workspace: 'Bench' },
  });
  expectStatus(setup, 201, 'setup');
  return setup.body;
}

/** One app process on infrastructure of its own, set up with an owner. */
/**
 * One app for the phases that measure admission, budgets and authorisation through the API: its
 * supervisor is off, so the runs they admit stay admitted and no execution competes for the CPU.
 */
export async function startApp(env: Record<string, string> = {}): Promise<App> {
  const infra = await startInfrastructure();
  let app: AppProcess | null = null;
  const stop = async () => {
    await app?.stop();
    await infra.cleanup();
  };
  try {
    app = await spawnApp(infra, 'the app', { PACKETAGENT_SUPERVISOR_ENABLED: 'false', ...env });
    const setup = await firstRunSetup(app.baseUrl, infra.setupToken);
    return { baseUrl: app.baseUrl, grpcAddress: app.grpcAddress, db: infra.db, bus: infra.bus, setup, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export function expectStatus(answer: Answer<unknown>, status: number, what: string): void {
  if (answer.status === status) return;
  const code = (answer.body as { code?: unknown } | null)?.code;
  throw new Error(`${what} answered ${answer.status}${typeof code === 'string' ? ` (${code})` : ''}, expected ${status}`);
}

/** Relay work left over from one phase must not land in the next one's measurements. */
export async function relayIdle(app: Pick<App, 'baseUrl'>): Promise<void> {
  await eventually(
    async () => {
      const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
      return /^packetagent_relay_backlog_events 0$/m.test(text);
    },
    { timeoutMs: 60_000, intervalMs: 50, what: 'the relay to publish every committed event' },
  );
}

// ---------------------------------------------------------------------------------------------
// CPU use.

/** Busy and total jiffies of the machine from /proc/stat; null where there is no /proc. */
function machineTicks(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = fields.reduce((sum, value) => sum + value, 0);
    return { busy: total - fields[3]! - fields[4]!, total };
  } catch {
    return null;
  }
}

/** Where a process's CPU counters are read: an app's metrics endpoint. */
type Metered = Pick<App, 'baseUrl'>;

async function appCpuSeconds(apps: readonly Metered[]): Promise<number> {
  let total = 0;
  for (const app of apps) {
    const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
    const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    total += read('process_cpu_user_seconds_total') + read('process_cpu_system_seconds_total');
  }
  return total;
}

/**
 * Starts measuring CPU use; the returned function ends the phase and reports cores busy. With
 * several app processes, `app` is their sum.
 */
export async function cpuFrom(app: Metered | readonly Metered[] | null): Promise<() => Promise<CpuUse>> {
  const apps = app === null ? null : Array.isArray(app) ? (app as readonly Metered[]) : [app as Metered];
  const appStart = apps ? await appCpuSeconds(apps) : null;
  const machineStart = machineTicks();
  const benchStart = process.cpuUsage();
  const start = now();
  return async () => {
    const seconds = (now() - start) / 1_000;
    const bench = process.cpuUsage(benchStart);
    const machineEnd = machineTicks();
    const appEnd = apps && appStart !== null ? await appCpuSeconds(apps) : null;
    return {
      machine: machineStart && machineEnd ? ((machineEnd.busy - machineStart.busy) / (machineEnd.total - machineStart.total)) * availableParallelism() : null,
      app: appEnd !== null && appStart !== null ? (appEnd - appStart) / seconds : null,
      bench: (bench.user + bench.system) / 1e6 / seconds,
    };
  };
}
