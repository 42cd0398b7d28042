import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { eventually } from './wait';

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

export function exitOf(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/**
 * A nats-server of the test's own (from PATH, JetStream in `storeDir`), for tests that crash or
 * restart the server; the shared one stays untouched.
 */
export class NatsServerProcess {
  private child: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly storeDir: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' });
    await eventually(
      async () => {
        const probe = await connect({ servers: this.url, reconnect: false }).catch(() => null);
        await probe?.close();
        return probe !== null;
      },
      { what: `nats-server on port ${this.port}` },
    );
  }

  /** SIGKILL: no chance to flush, as in a crash or power loss. */
  async crash(): Promise<void> {
    if (!this.child) return;
    const child = this.child;
    this.child = null;
    child.kill('SIGKILL');
    await exitOf(child);
  }
}

/** A server process started by a test or a benchmark, ready when it answered its readiness URL. */
export interface ServerProcess {
  child: ChildProcess;
  /** Resolves when the process has exited, however it ended. */
  exited: Promise<number | null>;
  /** The tail of its output, to explain a failure. */
  output(): string;
  /** SIGKILL, as a crash would end it. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within 20 s. */
  stop(): Promise<void>;
}

/**
 * Spawns `node <entry>` and waits until `readyUrl` answers 200; a process that exits first, or
 * is not ready within a minute, is killed and reported with the tail of its output. This
 * process exiting kills it too.
 */
export async function startServerProcess(options: { name: string; entry: string; cwd: string; env: NodeJS.ProcessEnv; readyUrl: string }): Promise<ServerProcess> {
  const child = spawn(process.execPath, [options.entry], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-32_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = exitOf(child).then((code) => {
    process.off('exit', killOnExit);
    return code;
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000).unref())]);
    if (!done) await kill();
  };
  const crashed = exited.then((code) => Promise.reject(new Error(`${options.name} exited with code ${String(code)}`)));
  // A later exit (stop, kill) rejects this too; that is expected then.
  crashed.catch(() => undefined);
  const ready = eventually(async () => (await fetch(options.readyUrl).catch(() => null))?.status === 200, { timeoutMs: 60_000, intervalMs: 100, what: `${options.name} to be ready` });
  try {
    await Promise.race([ready, crashed]);
  } catch (error) {
    await kill();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${output}`);
  }
  return { child, exited, output: () => output, kill, stop };
}

/**
 * The host's processes whose command line holds `marker` (pid, parent, state and arguments), but
 * for this `ps` and any line holding one of `except`: what a test checks is gone or still there.
 */
export function hostProcesses(marker: string, except: readonly string[] = []): string[] {
  return execFileSync('ps', ['-eo', 'pid,ppid,stat,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo') && !except.some((text) => line.includes(text)));
}
