import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import { execKey, type ExecLimitName } from '@packetagent/contracts';
import { DriverStartError, type DriverExit, type DriverProbe, type DriverProcess, type PreparedExec, type SandboxDriver } from '../sandbox-driver';
import { bwrapArguments, prlimitArguments, sandboxAccounts, type SystemView } from './bwrap-arguments';
import { createExecCgroup, detectCgroups, reclaimOrphanCgroups, type CgroupHost, type ExecCgroup } from './cgroup-limits';

export interface BubblewrapDriverOptions {
  /** Where per-exec files (the sandbox's /etc/passwd) are written; never inside a workspace. */
  scratchDir: string;
  bwrapPath?: string;
  prlimitPath?: string;
  setprivPath?: string;
  /** The uid and gid inside the sandbox; 65534 (nobody) by default. */
  uid?: number;
  gid?: number;
  /** How often the control groups are read for a limit hit while a command runs. */
  limitPollMs?: number;
}

/** /etc entries programs need to run: the loader cache, certificates, alternatives, zone data. */
const ETC_ENTRIES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/ssl', '/etc/ca-certificates', '/etc/localtime', '/etc/mime.types'];

/**
 * The launcher between the service and bwrap: it dies with the service from its first
 * instruction (setpriv's parent-death signal, kept across exec), gives up if the service died
 * before that (its parent is not the service any more), joins the exec's control groups, and
 * becomes prlimit, then bwrap. Without it, a service killed while a command starts would leave
 * bwrap running with no parent to die with.
 */
const LAUNCHER = '[ "$PPID" = "$1" ] || exit 125; shift; n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';

function systemView(): SystemView {
  const usrSymlinks = readdirSync('/')
    .filter((name) => {
      try {
        return lstatSync(join('/', name)).isSymbolicLink() && readlinkSync(join('/', name)).startsWith('usr/');
      } catch {
        return false;
      }
    })
    .map((name) => ({ name, target: readlinkSync(join('/', name)) }));
  return { usrSymlinks, etcEntries: ETC_ENTRIES.filter((entry) => existsSync(entry)) };
}

function signalName(code: number): string | null {
  const number = code - 128;
  return (Object.entries(constants.signals).find(([, value]) => value === number)?.[0] as string | undefined) ?? null;
}

function limitOfSignal(signal: string | null): ExecLimitName | null {
  if (signal === 'SIGXCPU') return 'cpu_time';
  if (signal === 'SIGXFSZ') return 'file_size';
  return null;
}

/**
 * Commands in bubblewrap: new user, PID, IPC, UTS, cgroup and network namespaces; CPU time, file
 * size and open files through rlimits (prlimit); processes and memory through a control group
 * per exec where the host lets the service make one (see `probe` for what applies here).
 */
export class BubblewrapDriver implements SandboxDriver {
  readonly name = 'bubblewrap' as const;
  private readonly bwrap: string;
  private readonly prlimit: string;
  private readonly setpriv: string;
  private readonly uid: number;
  private readonly gid: number;
  private cgroups: Promise<CgroupHost | null> | null = null;
  private view: SystemView | null = null;

  constructor(private readonly options: BubblewrapDriverOptions) {
    this.bwrap = options.bwrapPath ?? '/usr/bin/bwrap';
    this.prlimit = options.prlimitPath ?? '/usr/bin/prlimit';
    this.setpriv = options.setprivPath ?? '/usr/bin/setpriv';
    this.uid = options.uid ?? 65534;
    this.gid = options.gid ?? 65534;
  }

  async probe(): Promise<DriverProbe> {
    if (!existsSync(this.bwrap)) return { available: false, detail: `bubblewrap not found at ${this.bwrap}: install it with apt-get install bubblewrap`, unenforced: [] };
    const version = spawnSync(this.bwrap, ['--version'], { encoding: 'utf8', env: {} });
    if (version.status !== 0) return { available: false, detail: `${this.bwrap} --version failed: ${version.stderr.trim() || `exit ${version.status}`}`, unenforced: [] };
    const trial = spawnSync(this.bwrap, ['--unshare-all', '--die-with-parent', '--ro-bind', '/usr', '/usr', ...this.systemView().usrSymlinks.flatMap((link) => ['--symlink', link.target, `/${link.name}`]), '--', 'true'], { encoding: 'utf8', env: {} });
    if (trial.status !== 0) {
      return { available: false, detail: `bubblewrap cannot make namespaces here (${trial.stderr.trim() || `exit ${trial.status}`}): user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces)`, unenforced: [] };
    }
    const unenforced: string[] = [];
    if (!existsSync(this.prlimit)) unenforced.push(`cpu_time, file_size, open_files: prlimit not found at ${this.prlimit} (apt-get install util-linux)`);
    if (!existsSync(this.setpriv)) unenforced.push(`dying with the service while a command starts: setpriv not found at ${this.setpriv} (apt-get install util-linux)`);
    const host = await this.cgroupHost();
    if (!host) unenforced.push('pids, memory: no control groups visible in /proc/self/cgroup');
    else for (const missing of host.missing) unenforced.push(missing);
    if (!host?.pidsDir && process.getuid?.() === 0) unenforced.push('pids: RLIMIT_NPROC does not bind a process whose host uid is root');
    return { available: true, detail: `${version.stdout.trim()}${host ? `, cgroup v${host.version}` : ''}`, unenforced };
  }

  async start(exec: PreparedExec): Promise<DriverProcess> {
    if (!existsSync(this.bwrap)) throw new DriverStartError(`bubblewrap not found at ${this.bwrap}: install it with apt-get install bubblewrap`);
    const scratch = join(this.options.scratchDir, execKey(exec.execId));
    await mkdir(scratch, { recursive: true, mode: 0o700 });
    const accounts = sandboxAccounts(this.uid, this.gid);
    const passwdFile = join(scratch, 'passwd');
    const groupFile = join(scratch, 'group');
    await writeFile(passwdFile, accounts.passwd, { mode: 0o644 });
    await writeFile(groupFile, accounts.group, { mode: 0o644 });

    const host = await this.cgroupHost();
    let cgroup: ExecCgroup | null = null;
    if (host && (host.pidsDir || host.memoryDir)) cgroup = await createExecCgroup(host, execKey(exec.execId), exec.limits);

    const isRoot = process.getuid?.() === 0;
    const bwrap = [this.bwrap, ...bwrapArguments(exec, this.systemView(), { passwdFile, groupFile, uid: this.uid, gid: this.gid, dropCapabilities: isRoot })];
    const limited = existsSync(this.prlimit) ? [this.prlimit, ...prlimitArguments(exec, { processes: !isRoot && !host?.pidsDir }), '--', ...bwrap] : bwrap;
    const procsFiles = cgroup?.procsFiles ?? [];
    const launcher = ['/bin/sh', '-c', LAUNCHER, 'sh', String(process.pid), String(procsFiles.length), ...procsFiles, ...limited];
    const command = existsSync(this.setpriv) ? [this.setpriv, '--pdeathsig', 'KILL', '--', ...launcher] : launcher;

    const child = spawn(command[0]!, command.slice(1), { stdio: [exec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], env: {} });
    const listeners: Array<(limit: ExecLimitName) => void> = [];
    let reported: ExecLimitName | null = null;
    const poll = cgroup
      ? setInterval(() => {
          void cgroup!.limitHit().then((limit) => {
            if (limit && !reported) {
              reported = limit;
              for (const listener of listeners) listener(limit);
            }
          });
        }, this.options.limitPollMs ?? 100)
      : null;

    const cleanup = async () => {
      if (poll) clearInterval(poll);
      await cgroup?.dispose();
      await rm(scratch, { recursive: true, force: true });
    };

    const exited = new Promise<DriverExit>((resolve, reject) => {
      child.once('error', (error) => {
        void cleanup().finally(() => reject(new DriverStartError(`could not start bubblewrap: ${error.message}`)));
      });
      child.once('close', (code, signal) => {
        void (async () => {
          const hit = (await cgroup?.limitHit()) ?? null;
          await cleanup();
          const exitSignal = signal ?? (code !== null && code > 128 ? signalName(code) : null);
          const exitCode = signal ? null : code;
          resolve({ exitCode, signal: exitSignal, limit: reported ?? hit ?? limitOfSignal(exitSignal) });
        })();
      });
    });
    if (child.pid === undefined) {
      await exited;
      throw new DriverStartError('bubblewrap did not start');
    }

    // A process that exits while its stdin is written to must not raise EPIPE on the service.
    child.stdin?.on('error', () => undefined);
    return {
      stdin: child.stdin ?? null,
      // Both are pipes (spawned so above); the type of a conditional stdio cannot say it.
      stdout: child.stdout!,
      stderr: child.stderr!,
      exited,
      async kill() {
        // bwrap's child dies with it (--die-with-parent), and with it the whole PID namespace;
        // the control group is emptied too, for a kill that lands while bwrap is still setting
        // the sandbox up (before its child has asked to die with it).
        try {
          child.kill('SIGKILL');
        } catch {
          // Already gone.
        }
        await cgroup?.kill();
      },
      onLimit(listener) {
        listeners.push(listener);
      },
    };
  }

  async reclaim(): Promise<number> {
    const host = await this.cgroupHost();
    return host ? reclaimOrphanCgroups(host) : 0;
  }

  private cgroupHost(): Promise<CgroupHost | null> {
    this.cgroups ??= detectCgroups();
    return this.cgroups;
  }

  private systemView(): SystemView {
    this.view ??= systemView();
    return this.view;
  }
}
