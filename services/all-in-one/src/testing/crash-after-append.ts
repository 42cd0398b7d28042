import type { FaultPort } from '@packetagent/supervisor';

/**
 * The recovery tests' fault: dies like a killed process right after the n-th appended event of
 * a type (`effect.prepared`, `run.checkpoint#2`). Wired only from PACKETAGENT_FAULT_CRASH_AFTER,
 * which production mode refuses.
 */
export class CrashAfterAppend implements FaultPort {
  private readonly type: string;
  private left: number;

  constructor(spec: string) {
    const [type, nth] = spec.split('#') as [string, string | undefined];
    this.type = type;
    this.left = Number(nth ?? 1);
  }

  afterAppend(events: ReadonlyArray<{ type: string }>): void {
    this.left -= events.filter((event) => event.type === this.type).length;
    if (this.left <= 0) process.kill(process.pid, 'SIGKILL');
  }
}
