import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecLimitName } from '@packetagent/contracts';

const CGROUP_ROOT = '/sys/fs/cgroup';
const GROUP_DIR = 'packetagent-sandbox';

/**
 * This process's own directory under the shared one: `<pid>-<start time>`, so a later process
 * can tell a live owner from a dead one (and from a new process that reused the pid).
 */
let ownDirectory: Promise<string> | null = null;

async function startTimeOf(pid: number): Promise<string | null> {
  const stat = await readText(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  return stat ? (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null) : null;
}

function ownerDirectory(): Promise<string> {
  ownDirectory ??= startTimeOf(process.pid).then((start) => `${process.pid}-${start ?? '0'}`);
  return ownDirectory;
}

async function ownerAlive(owner: string): Promise<boolean> {
  const match = /^(\d+)-(\d+)$/.exec(owner);
  if (!match) return true;
  return (await startTimeOf(Number(match[1]))) === match[2];
}

/** Where this host lets the service make a control group per exec, for processes and memory. */
export interface CgroupHost {
  version: 1 | 2;
  /** Parent directory for per-exec groups, per controller (the same directory twice on v2). */
  pidsDir: string | null;
  memoryDir: string | null;
  /** Why a controller is not usable, for the status page. */
  missing: string[];
}

/** One exec's control groups. */
export interface ExecCgroup {
  /** cgroup.procs files the launcher writes its own pid into before it becomes bwrap. */
  readonly procsFiles: string[];
  /** Which limit the group saw hit so far (the memory limit's OOM kill, or a refused fork). */
  limitHit(): Promise<ExecLimitName | null>;
  /** Kills every process in the group now. */
  kill(): Promise<void>;
  /** Kills every process still in the group and removes it. */
  dispose(): Promise<void>;
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

async function writable(dir: string): Promise<boolean> {
  const probe = join(dir, GROUP_DIR, `probe-${process.pid}`);
  try {
    await mkdir(probe, { recursive: true });
    await rmdir(probe);
    return true;
  } catch {
    return false;
  }
}

/** Finds this process's own control groups (v1 per controller, or the unified v2 one). */
export async function detectCgroups(): Promise<CgroupHost | null> {
  const self = await readText('/proc/self/cgroup');
  if (!self) return null;
  const lines = self.trim().split('\n').map((line) => line.split(':'));
  const v1 = (controller: string) => lines.find(([, controllers]) => controllers?.split(',').includes(controller))?.[2];
  const pidsPath = v1('pids');
  const memoryPath = v1('memory');
  if (pidsPath !== undefined || memoryPath !== undefined) {
    const missing: string[] = [];
    const usable = async (controller: string, path: string | undefined) => {
      if (path === undefined) return missing.push(`${controller}: no cgroup v1 ${controller} controller`), null;
      const dir = join(CGROUP_ROOT, controller, path);
      return (await writable(dir)) ? dir : (missing.push(`${controller}: ${dir} is not writable`), null);
    };
    return { version: 1, pidsDir: await usable('pids', pidsPath), memoryDir: await usable('memory', memoryPath), missing };
  }
  const unified = lines.find(([hierarchy]) => hierarchy === '0')?.[2];
  if (unified === undefined) return null;
  const dir = join(CGROUP_ROOT, unified);
  if (!(await writable(dir))) return { version: 2, pidsDir: null, memoryDir: null, missing: [`pids, memory: ${dir} is not writable (no delegated cgroup v2 subtree)`] };
  // A child gets only the controllers its parent enables for its subtree.
  const enabled = ((await readText(join(dir, 'cgroup.subtree_control'))) ?? '').split(/\s+/);
  const missing: string[] = [];
  const has = (controller: string) => (enabled.includes(controller) ? dir : (missing.push(`${controller}: not enabled in ${dir}/cgroup.subtree_control`), null));
  return { version: 2, pidsDir: has('pids'), memoryDir: has('memory'), missing };
}

function countOf(text: string | null, key: string): number {
  const match = text?.match(new RegExp(`^${key} (\\d+)$`, 'm'));
  return match ? Number(match[1]) : 0;
}

/** Makes the exec's groups with its limits written; a controller that cannot be used is left out (its limit is reported unenforced). */
export async function createExecCgroup(host: CgroupHost, name: string, limits: { pids: number; memoryBytes: number }): Promise<ExecCgroup> {
  const dirs = new Set<string>();
  const writes: Array<[string, string]> = [];
  let pidsGroup: string | null = null;
  let memoryGroup: string | null = null;
  const owner = await ownerDirectory();
  if (host.pidsDir) {
    pidsGroup = join(host.pidsDir, GROUP_DIR, owner, name);
    dirs.add(pidsGroup);
    writes.push([join(pidsGroup, 'pids.max'), String(limits.pids)]);
  }
  if (host.memoryDir) {
    memoryGroup = join(host.memoryDir, GROUP_DIR, owner, name);
    dirs.add(memoryGroup);
    if (host.version === 1) writes.push([join(memoryGroup, 'memory.limit_in_bytes'), String(limits.memoryBytes)]);
    else writes.push([join(memoryGroup, 'memory.max'), String(limits.memoryBytes)], [join(memoryGroup, 'memory.swap.max'), '0']);
  }
  for (const dir of dirs) await mkdir(dir, { recursive: true });
  for (const [file, value] of writes) await writeFile(file, value);
  if (memoryGroup && host.version === 1) {
    // No swap beyond the limit where swap accounting exists; absent on hosts without it.
    await writeFile(join(memoryGroup, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(() => undefined);
  }

  return {
    procsFiles: [...dirs].map((dir) => join(dir, 'cgroup.procs')),
    async limitHit() {
      if (memoryGroup) {
        const events = await readText(join(memoryGroup, host.version === 1 ? 'memory.oom_control' : 'memory.events'));
        if (countOf(events, 'oom_kill') > 0) return 'memory';
      }
      if (pidsGroup && countOf(await readText(join(pidsGroup, 'pids.events')), 'max') > 0) return 'pids';
      return null;
    },
    async kill() {
      for (const dir of dirs) await killAll(dir, host.version);
    },
    async dispose() {
      for (const dir of dirs) await killAll(dir, host.version);
      for (const dir of dirs) await removeWhenEmpty(dir);
    },
  };
}

async function killAll(dir: string, version: 1 | 2): Promise<void> {
  if (version === 2 && (await writeFile(join(dir, 'cgroup.kill'), '1').then(() => true, () => false))) return;
  for (let round = 0; round < 20; round++) {
    const pids = ((await readText(join(dir, 'cgroup.procs'))) ?? '').split('\n').filter(Boolean).map(Number);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function removeWhenEmpty(dir: string): Promise<void> {
  // A group empties a moment after its last process is reaped: retry soon, then less often (about 2 s in all).
  for (let attempt = 0, delay = 1; attempt < 14; attempt++, delay = Math.min(delay * 2, 250)) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * Ends what services on this host that died left running: every process in the exec groups of
 * an owner that is gone is killed and the groups removed. A command's own sandbox dies with the
 * service almost always (bubblewrap's --die-with-parent); this is for when it did not. Answers
 * how many exec groups it emptied.
 */
export async function reclaimOrphanCgroups(host: CgroupHost): Promise<number> {
  let reclaimed = 0;
  for (const parent of new Set([host.pidsDir, host.memoryDir].filter((dir): dir is string => dir !== null))) {
    const root = join(parent, GROUP_DIR);
    const owners = await readdir(root, { withFileTypes: true }).catch(() => []);
    for (const owner of owners) {
      if (!owner.isDirectory() || owner.name.startsWith('probe-') || (await ownerAlive(owner.name))) continue;
      const ownerDir = join(root, owner.name);
      for (const group of await readdir(ownerDir, { withFileTypes: true }).catch(() => [])) {
        if (!group.isDirectory()) continue;
        await killAll(join(ownerDir, group.name), host.version);
        await removeWhenEmpty(join(ownerDir, group.name));
        if (parent === (host.pidsDir ?? host.memoryDir)) reclaimed += 1;
      }
      await removeWhenEmpty(ownerDir);
    }
  }
  return reclaimed;
}
