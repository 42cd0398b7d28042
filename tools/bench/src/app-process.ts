/**
 * The compiled all-in-one app as a child process, for the phases that measure it through its
 * public interfaces, and what those phases share: closed-loop clients and CPU accounting.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createTestBus,
  createTestDatabase,
  createTestRedis,
  eventually,
  exitOf,
  freePort,
  testEnv,
  type TestBus,
  type TestDatabase,
  type TestRedis,
} from '@packetagent/testing';
import { now, sleep } from './stats';

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

export async function startApp(): Promise<App> {
  ensureBuilt();
  // Empty: the app migrates its database itself, as in production.
  const db = await createTestDatabase({ empty: true });
  const cleanups: (() => Promise<void>)[] = [() => db.drop()];
  let child: ChildProcess | null = null;
  let output = '';
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const exited = await Promise.race([exitOf(child).then(() => true), sleep(20_000).then(() => false)]);
      if (!exited) child.kill('SIGKILL');
    }
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const bus = await createTestBus();
    cleanups.push(() => bus.cleanup());
    const redis: TestRedis = await createTestRedis();
    cleanups.push(() => redis.cleanup());
    const dataDir = mkdtempSync(join(tmpdir(), 'pa-bench-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const setupToken = randomBytes(24).toString('base64url');
    child = spawn(process.execPath, [ENTRY], {
      cwd: ROOT,
      env: {
        ...process.env,
        PACKETAGENT_PORT: String(port),
        PACKETAGENT_DATABASE_URL: db.url,
        PACKETAGENT_DATABASE_POOL_SIZE: '20',
        PACKETAGENT_NATS_URL: testEnv.natsUrl,
        PACKETAGENT_BUS_PREFIX: bus.prefix,
        PACKETAGENT_REDIS_URL: redis.url,
        PACKETAGENT_REDIS_KEY_PREFIX: redis.keyPrefix,
        PACKETAGENT_DATA_DIR: dataDir,
        PACKETAGENT_SETUP_TOKEN: setupToken,
        PACKETAGENT_LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = child;
    // Only the tail is kept, to explain a failed start.
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16_000));
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    // A crash of this process must not leave the app running.
    const killOnExit = () => started.kill('SIGKILL');
    process.once('exit', killOnExit);
    cleanups.push(async () => void process.off('exit', killOnExit));

    const baseUrl = `http://127.0.0.1:${port}`;
    const crashed = exitOf(started).then((code) => Promise.reject(new Error(`the app exited with code ${String(code)}:\n${output}`)));
    const ready = eventually(async () => (await fetch(`${baseUrl}/readyz`)).status === 200, { timeoutMs: 60_000, intervalMs: 100, what: 'the app to be ready' });
    // The app's exit at stop() rejects this too; that is expected then.
    crashed.catch(() => undefined);
    await Promise.race([ready, crashed]).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${output}`);
    });

    const setup = await request<{ workspaceId: string; apiKey: string }>(`${baseUrl}/api/v1/setup`, 'POST', {
      body: { token: setupToken, email: 'bench@example.com', password: randomBytes(18).toString('base64url'), workspace: 'Bench' },
    });
    expectStatus(setup, 201, 'setup');
    return { baseUrl, db, bus, setup: setup.body, stop };
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
export async function relayIdle(app: App): Promise<void> {
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

async function appCpuSeconds(app: App): Promise<number> {
  const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return read('process_cpu_user_seconds_total') + read('process_cpu_system_seconds_total');
}

/** Starts measuring CPU use; the returned function ends the phase and reports cores busy. */
export async function cpuFrom(app: App | null): Promise<() => Promise<CpuUse>> {
  const appStart = app ? await appCpuSeconds(app) : null;
  const machineStart = machineTicks();
  const benchStart = process.cpuUsage();
  const start = now();
  return async () => {
    const seconds = (now() - start) / 1_000;
    const bench = process.cpuUsage(benchStart);
    const machineEnd = machineTicks();
    const appEnd = app && appStart !== null ? await appCpuSeconds(app) : null;
    return {
      machine: machineStart && machineEnd ? ((machineEnd.busy - machineStart.busy) / (machineEnd.total - machineStart.total)) * availableParallelism() : null,
      app: appEnd !== null && appStart !== null ? (appEnd - appStart) / seconds : null,
      bench: (bench.user + bench.system) / 1e6 / seconds,
    };
  };
}
