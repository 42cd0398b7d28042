import { spawn, type ChildProcess } from 'node:child_process';
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
