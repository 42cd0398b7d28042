import { createHash } from 'node:crypto';
import { commandRequirement, type ComputerRecord, type ExecLimits, type ParsedExecRequest } from '@packetagent/contracts';
import { DriverStartError } from '../drivers/sandbox-driver';
import { ExecRefusedError } from '../exec/prepare-exec';
import type { ComputerKeys } from './computer-keys';
import type { ComputerRegistry } from './computer-registry';
import { targetKey } from './computer-status';
import type { ComputerStore } from './computer-store';
import { killGroup, startRemote, type RemoteProcess } from './ssh/remote-process';
import { remoteCwd } from './ssh/remote-script';
import { SshConnectError, SshLink, type LinkTimings } from './ssh/ssh-link';

/** What a command on a computer cannot be held to, said in every result. */
export const SSH_UNENFORCED = [
  'memory: a computer has no sandbox; nothing bounds memory there',
  'pids: a computer has no sandbox; nothing bounds processes there',
  'tmp_bytes: commands use the computer\'s own /tmp',
  'network: the computer\'s network is its own; its policy decides whether commands may run at all',
];

/** A command bound for a computer, checked against its record and ready to start. */
export interface ComputerExec {
  record: ComputerRecord;
  /** Absolute on the computer, inside one of its roots as written (its real path is checked there). */
  cwd: string;
  start(argv: readonly string[], env: Readonly<Record<string, string>>, limits: ExecLimits): Promise<RemoteProcess>;
}

interface WarmLink {
  link: SshLink;
  idle: NodeJS.Timeout | null;
  users: number;
}

/**
 * Runs commands on registered computers: the key through policy's grant, one warm connection per
 * computer and key (closed after a minute unused), a fresh one for a kill after a loss.
 */
export class ComputerExecs {
  private readonly warm = new Map<string, Promise<WarmLink>>();

  constructor(
    private readonly store: ComputerStore,
    private readonly registry: ComputerRegistry,
    private readonly keys: ComputerKeys,
    private readonly options: { timings: LinkTimings; idleMs: number },
  ) {}

  /** The computer's record and checks; null for a `local` computer, whose commands run in this sandbox. */
  async prepare(request: ParsedExecRequest): Promise<ComputerExec | null> {
    const target = request.computer!;
    const { record } = await this.store.require(request.workspaceId, target.name);
    if (record.kind === 'local') return null;
    const ssh = record.ssh!;
    if (commandRequirement(record.policy) === 'deny') throw new ExecRefusedError(`${record.name}'s policy denies commands`, [{ path: 'computer', message: 'the computer\'s policy denies shell, write or network' }]);
    if (Object.keys(request.secrets).length > 0 && record.policy.secrets !== 'allow') {
      throw new ExecRefusedError(`${record.name} does not take secrets`, [{ path: 'secrets', message: 'the computer\'s policy denies secrets' }]);
    }
    if (request.egress.length > 0) throw new ExecRefusedError('egress is for the local sandbox', [{ path: 'egress', message: 'a computer fetches nothing on a command\'s behalf' }]);
    const cwd = remoteCwd(request.cwd, record.roots);
    if (!cwd.ok) throw new ExecRefusedError('the sandbox refused the command', [{ path: 'cwd', message: cwd.message }]);
    const key = await this.keys.redeem(target.keyGrant);
    if (key.credential !== ssh.keyCredential) throw new ExecRefusedError('the key grant is not for this computer', [{ path: 'computer.keyGrant', message: `grants ${key.credential}, the computer uses ${ssh.keyCredential}` }]);
    const pooled = `${request.workspaceId}/${record.name}/${targetKey(record)}/${createHash('sha256').update(key.value).digest('hex')}`;
    return {
      record,
      cwd: cwd.cwd,
      start: async (argv, env, limits) => {
        const warm = await this.acquire(pooled, request.workspaceId, record, key.value);
        try {
          const process = await startRemote(warm.link, { argv, cwd: cwd.cwd, roots: record.roots, cpuSeconds: limits.cpuSeconds, fileSizeBytes: limits.fileSizeBytes, openFiles: limits.openFiles }, env, () => this.open(request.workspaceId, record, key.value));
          void process.exited.finally(() => this.release(pooled, warm));
          return process;
        } catch (error) {
          this.release(pooled, warm);
          throw error;
        }
      },
    };
  }

  /**
   * Starts an MCP server's program on a computer, in its first root, with its stdin kept for the
   * server's requests and no environment of ours. The key comes from a run's grant (its call was
   * allowed on this computer), or is granted for listing the server's tools when a version is
   * created, which policy does only for a computer whose policy lets commands run unasked.
   * Null for a `local` computer, whose programs run in this sandbox.
   */
  async startServer(workspaceId: string, name: string, key: { grant: string } | 'listing', argv: readonly string[], limits: ExecLimits): Promise<RemoteProcess | null> {
    const { record } = await this.store.require(workspaceId, name);
    if (record.kind === 'local') return null;
    if (commandRequirement(record.policy) === 'deny') throw new DriverStartError(`${record.name}'s policy denies commands`);
    const cwd = remoteCwd('.', record.roots);
    if (!cwd.ok) throw new DriverStartError(`${record.name} has no root to start the server in: ${cwd.message}`);
    const privateKey = key === 'listing' ? await this.keys.forProbe(workspaceId, name, 'mcp_list') : await this.redeemFor(record, key.grant);
    const pooled = `${workspaceId}/${record.name}/${targetKey(record)}/${createHash('sha256').update(privateKey).digest('hex')}`;
    const warm = await this.acquire(pooled, workspaceId, record, privateKey);
    try {
      const process = await startRemote(warm.link, { argv, cwd: cwd.cwd, roots: record.roots, cpuSeconds: limits.cpuSeconds, fileSizeBytes: limits.fileSizeBytes, openFiles: limits.openFiles, stdin: true }, {}, () => this.open(workspaceId, record, privateKey));
      void process.exited.finally(() => this.release(pooled, warm));
      return process;
    } catch (error) {
      this.release(pooled, warm);
      throw error;
    }
  }

  private async redeemFor(record: ComputerRecord, grant: string): Promise<string> {
    const key = await this.keys.redeem(grant);
    if (key.credential !== record.ssh!.keyCredential) throw new DriverStartError(`the key grant is for ${key.credential}, and ${record.name} uses ${record.ssh!.keyCredential}`);
    return key.value;
  }

  /**
   * Kills the process group a replica that died left running on a computer, through a connection
   * of its own (the key granted for `reclaim`); true once the group is seen gone.
   */
  async reclaim(workspaceId: string, name: string, pgid: number): Promise<boolean> {
    const { record } = await this.store.require(workspaceId, name);
    if (record.kind !== 'ssh') return false;
    const link = await this.open(workspaceId, record, await this.keys.forProbe(workspaceId, name, 'reclaim'));
    try {
      return await killGroup(link, pgid);
    } finally {
      link.close();
    }
  }

  closeAll(): void {
    for (const pending of this.warm.values()) void pending.then((warm) => warm.link.close(), () => undefined);
    this.warm.clear();
  }

  private async acquire(key: string, workspaceId: string, record: ComputerRecord, privateKey: string): Promise<WarmLink> {
    let pending = this.warm.get(key);
    if (pending) {
      const warm = await pending.catch(() => null);
      if (!warm || warm.link.isClosed) {
        if (this.warm.get(key) === pending) this.warm.delete(key);
        pending = undefined;
      }
    }
    if (!pending) {
      pending = this.open(workspaceId, record, privateKey).then((link) => ({ link, idle: null, users: 0 }));
      this.warm.set(key, pending);
      pending.catch(() => this.warm.get(key) === pending && this.warm.delete(key));
    }
    const warm = await pending;
    if (warm.idle) clearTimeout(warm.idle);
    warm.idle = null;
    warm.users++;
    return warm;
  }

  private release(key: string, warm: WarmLink): void {
    warm.users--;
    if (warm.users > 0 || warm.link.isClosed) return;
    warm.idle = setTimeout(() => {
      warm.link.close();
      void this.warm.get(key)?.then((current) => current === warm && this.warm.delete(key));
    }, this.options.idleMs);
    warm.idle.unref();
  }

  private async open(workspaceId: string, record: ComputerRecord, privateKey: string): Promise<SshLink> {
    try {
      return await SshLink.open(record.ssh!, privateKey, this.options.timings);
    } catch (error) {
      if (error instanceof SshConnectError && error.presentedKey) {
        await this.registry.keyRefusedDuringExec(workspaceId, record, error.presentedKey).catch(() => undefined);
        throw new DriverStartError(`${record.name}'s host key changed: it presented ${error.presentedKey}, which is not pinned, so nothing was sent. If the change is expected, update the computer's hostKeys`);
      }
      throw new DriverStartError(`${record.name} could not be reached: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
