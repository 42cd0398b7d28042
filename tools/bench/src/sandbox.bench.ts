import { spawn } from 'node:child_process';
import { CommandBus, topology } from '@packetagent/bus';
import { SandboxCommands } from '@packetagent/contracts';
import { startApp } from './app-process';
import { now, summarise, type Summary } from './stats';

export interface SandboxBenchOptions {
  warmup: number;
  count: number;
}

export interface SandboxResults {
  /** `true` through the compiled app: a NATS request to the sandbox service, bubblewrap, the record in Postgres, the answer. */
  sandboxed: Summary;
  /** `true` spawned directly from this process. */
  direct: Summary;
  driver: string;
  unenforced: string[];
}

function spawnTrue(): Promise<number> {
  const t0 = now();
  return new Promise((resolve, reject) => {
    const child = spawn('true', [], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', () => resolve(now() - t0));
  });
}

/** Start-to-exit of `true`: through the sandbox service against a bare spawn, one at a time, in the same run. */
export async function benchSandbox(options: SandboxBenchOptions): Promise<SandboxResults> {
  const app = await startApp();
  try {
    const bus = new CommandBus(app.bus.nc, topology(app.bus.prefix));
    const { workspaceId } = app.setup;
    const status = await bus.request(SandboxCommands.status, {});
    if (!status.driver) throw new Error(`the sandbox has no driver here: ${status.drivers.map((driver) => `${driver.name}: ${driver.detail}`).join('; ')}`);
    let n = 0;
    const sandboxed = async (): Promise<number> => {
      const t0 = now();
      const result = await bus.request(SandboxCommands.exec, { execId: `bench-${++n}`, workspaceId, argv: ['true'], requestedBy: { kind: 'user', id: 'bench' } }, { timeoutMs: 30_000 });
      const ms = now() - t0;
      if (result.state !== 'exited' || result.exitCode !== 0) throw new Error(`true through the sandbox ended ${result.state} (${result.message ?? result.exitCode})`);
      return ms;
    };
    const measure = async (op: () => Promise<number>, count: number) => {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) samples.push(await op());
      return samples;
    };
    await measure(spawnTrue, options.warmup);
    await measure(sandboxed, options.warmup);
    const direct = await measure(spawnTrue, options.count);
    const through = await measure(sandboxed, options.count);
    return { sandboxed: summarise(through), direct: summarise(direct), driver: status.driver, unenforced: status.drivers.find((driver) => driver.name === status.driver)?.unenforced ?? [] };
  } finally {
    await app.stop();
  }
}
