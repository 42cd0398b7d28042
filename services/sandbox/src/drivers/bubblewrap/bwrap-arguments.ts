import { posix } from 'node:path';
import { SANDBOX_PATHS, type PreparedExec } from '../sandbox-driver';

/** What the host offers the sandbox's read-only system view. */
export interface SystemView {
  /** Top-level entries of / that are symlinks into /usr on a merged-/usr host (`bin -> usr/bin`). */
  usrSymlinks: ReadonlyArray<{ name: string; target: string }>;
  /** Files and directories under /etc the programs need (certificates, loader cache, alternatives). */
  etcEntries: readonly string[];
}

export interface BwrapPlan {
  /** Host files written for this exec only: the sandbox's /etc/passwd and /etc/group. */
  passwdFile: string;
  groupFile: string;
  /** The uid and gid the command runs as inside its user namespace. */
  uid: number;
  gid: number;
  /** Whether bwrap may drop capabilities itself (it may when the service runs as root). */
  dropCapabilities: boolean;
}

/**
 * bwrap's arguments for one exec: every namespace unshared (network included: only a loopback
 * of its own), the workspace read-write at /workspace, a bounded private /tmp, /usr and a few
 * /etc entries read-only, a fresh /proc and minimal /dev, and nothing else of the host.
 */
export function bwrapArguments(exec: PreparedExec, view: SystemView, plan: BwrapPlan): string[] {
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-net',
    '--unshare-cgroup-try',
    '--uid',
    String(plan.uid),
    '--gid',
    String(plan.gid),
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    ...(plan.dropCapabilities ? ['--cap-drop', 'ALL'] : []),
    '--ro-bind',
    '/usr',
    '/usr',
  ];
  for (const link of view.usrSymlinks) args.push('--symlink', link.target, `/${link.name}`);
  for (const entry of view.etcEntries) args.push('--ro-bind-try', entry, entry);
  args.push('--ro-bind', plan.passwdFile, '/etc/passwd', '--ro-bind', plan.groupFile, '/etc/group');
  args.push('--proc', '/proc', '--dev', '/dev');
  args.push('--size', String(exec.limits.tmpBytes), '--tmpfs', SANDBOX_PATHS.tmp, '--dir', SANDBOX_PATHS.home);
  args.push('--bind', exec.workspaceDir, SANDBOX_PATHS.workspace);
  if (exec.egressDir) args.push('--ro-bind', exec.egressDir, SANDBOX_PATHS.egress);
  // Everything bwrap made on its root tmpfs (/etc, the mount points) becomes read-only too.
  args.push('--remount-ro', '/');
  args.push('--chdir', posix.join(SANDBOX_PATHS.workspace, exec.cwd));
  args.push('--clearenv');
  for (const [name, value] of Object.entries(exec.env).sort(([a], [b]) => a.localeCompare(b))) args.push('--setenv', name, value);
  args.push('--', ...exec.argv);
  return args;
}

/** prlimit's arguments for the limits rlimits enforce (inherited by the whole tree). */
export function prlimitArguments(exec: PreparedExec, options: { processes: boolean }): string[] {
  const { limits } = exec;
  const pair = (value: number) => `${value}:${value}`;
  return [
    // SIGXCPU at the soft limit names the limit; SIGKILL a second later if it is caught.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--fsize=${pair(limits.fileSizeBytes)}`,
    `--nofile=${pair(limits.openFiles)}`,
    '--core=0:0',
    ...(options.processes ? [`--nproc=${pair(limits.pids)}`] : []),
  ];
}

/** The sandbox's own /etc/passwd and /etc/group: the one user it runs as. */
export function sandboxAccounts(uid: number, gid: number): { passwd: string; group: string } {
  return {
    passwd: `sandbox:x:${uid}:${gid}:sandbox:${SANDBOX_PATHS.home}:/bin/sh\n`,
    group: `sandbox:x:${gid}:\n`,
  };
}
