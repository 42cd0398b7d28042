import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus, topology } from '@packetagent/bus';
import { ComputerCommands, PolicyCommands, SandboxCommands, VaultCommands } from '@packetagent/contracts';
import { SshdProcess } from '@packetagent/testing';
import { startApp } from './app-process';
import { now, ratio, summarise, table, type Summary } from './stats';

export interface ComputersBenchOptions {
  warmup: number;
  count: number;
}

export interface ComputersResults {
  /** `true` on a registered computer through the sandbox service, as a run's call: NATS request, key grant redeemed at the vault, warm SSH connection, the wrapper's checks, the record. */
  sandboxed: Summary;
  /** `ssh host true` from OpenSSH over a multiplexed master connection (the warm connection's equal). */
  openssh: Summary;
}

function run(command: string, args: string[]): Promise<number> {
  const t0 = now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(now() - t0) : reject(new Error(`${command} exited ${code}`))));
  });
}

/** Start-to-exit of `true` on a computer over a warm connection, against OpenSSH's own client on a warm master, in the same run. */
export async function benchComputers(options: ComputersBenchOptions): Promise<ComputersResults> {
  const sshd = await SshdProcess.create();
  await sshd.start();
  const root = await mkdtemp(join(tmpdir(), 'pa-bench-root-'));
  const app = await startApp();
  let master: ChildProcess | null = null;
  try {
    const bus = new CommandBus(app.bus.nc, topology(app.bus.prefix));
    const { workspaceId } = app.setup;
    const actor = { kind: 'user' as const, id: 'bench' };
    await bus.request(VaultCommands.putCredential, { workspaceId, name: 'bench_key', value: await sshd.privateKey(), actor });
    await bus.request(ComputerCommands.put, {
      workspaceId,
      name: 'bench-box',
      spec: { kind: 'ssh', ssh: { host: '127.0.0.1', port: sshd.port, user: sshd.user, hostKeys: [sshd.hostFingerprint()], keyCredential: 'bench_key' }, roots: [root], policy: { shell: 'allow', write: 'allow', network: 'allow' } },
      actor,
    });
    let n = 0;
    const sandboxed = async (): Promise<number> => {
      // The grant comes with policy's allow of the call; fetching it is not part of the command.
      const { token } = await bus.request(PolicyCommands.computerKeyGrant, { workspaceId, computer: 'bench-box', purpose: 'probe' });
      const t0 = now();
      const result = await bus.request(SandboxCommands.exec, { execId: `bench-run:call-${++n}`, workspaceId, runId: 'bench-run', argv: ['true'], computer: { name: 'bench-box', keyGrant: token }, requestedBy: { kind: 'service', id: 'supervisor' } }, { timeoutMs: 30_000 });
      const ms = now() - t0;
      if (result.state !== 'exited' || result.exitCode !== 0) throw new Error(`true on the computer ended ${result.state} (${result.message ?? result.exitCode})`);
      return ms;
    };

    const socket = join(sshd.dir, 'master.sock');
    const common = ['-p', String(sshd.port), '-i', join(sshd.dir, 'client_ed25519'), '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-S', socket];
    master = spawn('ssh', [...common, '-M', '-N', `${sshd.user}@127.0.0.1`], { stdio: 'ignore' });
    const openssh = () => run('ssh', [...common, `${sshd.user}@127.0.0.1`, 'true']);
    for (let tries = 0; ; tries++) {
      try {
        await run('ssh', [...common, '-O', 'check', `${sshd.user}@127.0.0.1`]);
        break;
      } catch (error) {
        if (tries > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    const measure = async (op: () => Promise<number>, count: number) => {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) samples.push(await op());
      return samples;
    };
    await measure(openssh, options.warmup);
    await measure(sandboxed, options.warmup);
    const viaOpenssh = await measure(openssh, options.count);
    const through = await measure(sandboxed, options.count);
    return { sandboxed: summarise(through), openssh: summarise(viaOpenssh) };
  } finally {
    master?.kill();
    await app.stop();
    await sshd.dispose();
    await rm(root, { recursive: true, force: true });
  }
}

export function printComputers(computers: ComputersResults): void {
  process.stdout.write('\n(i) computers: start-to-exit of `true` one at a time on a computer (a local sshd) over a warm connection, through the sandbox service as a run\'s call (NATS request, the key grant redeemed at the vault, the wrapper\'s checks, the record) and with OpenSSH\'s ssh over a multiplexed master\n');
  process.stdout.write(
    table(
      ['path', 'count', 'p50 ms', 'p99 ms', 'max ms', 'p50 vs ssh'],
      [
        ['through the sandbox', computers.sandboxed.count, computers.sandboxed.p50, computers.sandboxed.p99, computers.sandboxed.max, ratio(computers.sandboxed.p50, computers.openssh.p50)],
        ['ssh (ControlMaster)', computers.openssh.count, computers.openssh.p50, computers.openssh.p99, computers.openssh.max, '1.00x'],
      ],
    ),
  );
  process.stdout.write(`\ngoal: at most 1.5x ssh; ${computers.sandboxed.p50 <= 1.5 * computers.openssh.p50 ? 'met' : 'not met'}\n`);
}
