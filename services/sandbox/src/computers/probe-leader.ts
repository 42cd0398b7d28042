import type { Pool } from 'pg';
import { LeaderLock } from '@packetagent/eventstore';
import type { ComputerRegistry } from './computer-registry';
import type { ComputerStore } from './computer-store';

/** Advisory-lock namespace of the sandbox's leaders ("PASB"). */
const SANDBOX_LOCK_NAMESPACE = 0x5041_5342;

const CONCURRENT_PROBES = 4;

/**
 * One replica at a time probes every ssh computer each interval (the holder of an advisory lock);
 * the others try for the lock at the same pace, so a dead leader's work moves within an interval.
 */
export class ProbeLeader {
  private readonly lock: LeaderLock;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(
    pool: Pool,
    private readonly store: ComputerStore,
    private readonly registry: ComputerRegistry,
    private readonly options: { intervalMs: number; log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void },
  ) {
    this.lock = new LeaderLock(pool, { namespace: SANDBOX_LOCK_NAMESPACE, name: 'computer-probes', onLost: (reason) => options.log('warn', 'sandbox: computer probes lost their leadership', { reason }) });
  }

  get leading(): boolean {
    return this.lock.held;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = null;
    await this.lock.release();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (await this.lock.tryAcquire()) await this.round();
      } catch (error) {
        this.options.log('error', 'sandbox: a computer probe round failed', { error: error instanceof Error ? error.message : String(error) });
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.intervalMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private async round(): Promise<void> {
    const { readable, unreadable } = await this.store.sshTargets();
    for (const bad of unreadable) this.options.log('error', `sandbox: computer ${bad.name} is not probed: ${bad.error}`, { workspaceId: bad.workspaceId });
    const queue = [...readable];
    const worker = async () => {
      for (let next = queue.shift(); next && this.running && this.lock.held; next = queue.shift()) {
        await this.registry.probeStored(next).catch((error: unknown) => this.options.log('warn', `sandbox: probe of ${next!.record.name} failed`, { error: error instanceof Error ? error.message : String(error) }));
      }
    };
    await Promise.all(Array.from({ length: CONCURRENT_PROBES }, worker));
  }
}
