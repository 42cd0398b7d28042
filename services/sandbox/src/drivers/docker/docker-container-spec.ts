import { posix } from 'node:path';
import type { ContainerCreateOptions } from 'dockerode';
import { SANDBOX_PATHS, type PreparedExec } from '../sandbox-driver';

export const DEFAULT_DOCKER_USER = '65534:65534';
export const EXEC_LABEL = 'packetagent.exec';

export interface DockerSpecOptions {
  image: string;
  /** `uid[:gid]` or a user of the image; never root. */
  user?: string;
  /** CPUs the container may use at once (fractions allowed). */
  cpus?: number;
}

/**
 * What the engine is asked to create for one exec: the argv with no shell and no image
 * entrypoint, no network at all, a read-only root with a bounded private /tmp, no capabilities,
 * and the exec's limits as cgroup limits and rlimits; a stdin only for an exec that asks for one.
 */
export function dockerContainerSpec(exec: PreparedExec, options: DockerSpecOptions): ContainerCreateOptions {
  const user = options.user ?? DEFAULT_DOCKER_USER;
  assertSandboxUser(user);
  const { limits } = exec;
  const stdin = exec.stdin === true;
  return {
    Image: options.image,
    // An empty entrypoint, not the image's: images like node's start through a shell script.
    Entrypoint: [],
    Cmd: [...exec.argv],
    // The image's own ENV still applies beneath these (it belongs to the image, not the host).
    Env: Object.entries(exec.env).map(([name, value]) => `${name}=${value}`),
    WorkingDir: posix.join(SANDBOX_PATHS.workspace, exec.cwd),
    User: user,
    Hostname: 'sandbox',
    Labels: { [EXEC_LABEL]: exec.execId },
    NetworkDisabled: true,
    // A stdin only when asked for (an MCP stdio server): written raw on the attach stream, and
    // closed by the engine at the first EOF that client sends (StdinOnce), never kept for another.
    AttachStdin: stdin,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: stdin,
    StdinOnce: stdin,
    Tty: false,
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      Tmpfs: privateTmp(limits.tmpBytes, user),
      Binds: binds(exec),
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      IpcMode: 'private',
      // An init as PID 1 reaps orphaned children, so zombies do not count against the pids limit.
      Init: true,
      NanoCpus: Math.round((options.cpus ?? 1) * 1e9),
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      PidsLimit: limits.pids,
      Ulimits: [
        // The hard limit one second later: at soft == hard the kernel sends SIGKILL straight
        // away, which would look like any other kill; SIGXCPU first names the limit.
        { Name: 'cpu', Soft: limits.cpuSeconds, Hard: limits.cpuSeconds + 1 },
        { Name: 'fsize', Soft: limits.fileSizeBytes, Hard: limits.fileSizeBytes },
        { Name: 'nofile', Soft: limits.openFiles, Hard: limits.openFiles },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
      // Output is read through attach; the engine keeping its own copy on disk would be unbounded.
      LogConfig: { Type: 'none', Config: {} },
      AutoRemove: false,
      Privileged: false,
    },
  };
}

/**
 * /tmp, and HOME inside it (a mount of its own so that it exists and belongs to the user).
 * `exec`, not `noexec`: the workspace is writable and executable anyway, so noexec would stop
 * nothing, only break tools that build and run things in /tmp or HOME (go test, npx, pip).
 * Both are bounded by tmpBytes and their pages count against the memory limit.
 */
function privateTmp(tmpBytes: number, user: string): Record<string, string> {
  const common = `rw,exec,nosuid,nodev,size=${tmpBytes}`;
  return {
    [SANDBOX_PATHS.tmp]: `${common},mode=1777`,
    [SANDBOX_PATHS.home]: `${common},${homeOwner(user)}`,
  };
}

function homeOwner(user: string): string {
  const [uid, gid] = user.split(':');
  // A user named rather than numbered has a uid known only inside the image.
  if (!isNumeric(uid)) return 'mode=1777';
  return ['mode=0700', `uid=${uid}`, ...(isNumeric(gid) ? [`gid=${gid}`] : [])].join(',');
}

function isNumeric(id: string | undefined): id is string {
  return id !== undefined && /^\d+$/.test(id);
}

function binds(exec: PreparedExec): string[] {
  const result = [bind(exec.workspaceDir, SANDBOX_PATHS.workspace, 'rw')];
  if (exec.egressDir !== null) result.push(bind(exec.egressDir, SANDBOX_PATHS.egress, 'ro'));
  return result;
}

function bind(hostDir: string, target: string, mode: 'rw' | 'ro'): string {
  // The engine splits a bind on colons: a host path holding one would mount something else.
  if (!posix.isAbsolute(hostDir) || hostDir.includes(':')) throw new Error(`cannot bind ${JSON.stringify(hostDir)}: expected an absolute path without ':'`);
  return `${hostDir}:${target}:${mode}`;
}

export function assertSandboxUser(user: string): void {
  const name = user.split(':')[0] ?? '';
  if (name === '' || name === 'root' || /^0+$/.test(name)) throw new Error(`the Docker sandbox never runs as root (user ${JSON.stringify(user)})`);
}
