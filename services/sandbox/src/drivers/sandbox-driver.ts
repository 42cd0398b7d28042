import type { Readable, Writable } from 'node:stream';
import type { ExecLimitName, ExecLimits, SandboxDriverName } from '@packetagent/contracts';

/** Where things are inside every sandbox, whatever the driver. */
export const SANDBOX_PATHS = {
  workspace: '/workspace',
  tmp: '/tmp',
  egress: '/input/egress',
  /** HOME points into the private /tmp: nothing of the host's home is ever visible. */
  home: '/tmp/home',
} as const;

/** The PATH every sandboxed command gets. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** An exec checked and ready: nothing in it comes unchecked from the caller. */
export interface PreparedExec {
  execId: string;
  /** argv[0] is a plain program name, looked up on SANDBOX_PATH inside the sandbox. */
  argv: readonly string[];
  /** Host directory bound read-write at SANDBOX_PATHS.workspace. */
  workspaceDir: string;
  /** Normalised, relative to the workspace ('.' for the workspace itself); already checked not to escape it. */
  cwd: string;
  /** The complete environment (allowlisted names, PATH, HOME, LANG): the host's is never inherited. */
  env: Readonly<Record<string, string>>;
  limits: ExecLimits;
  /** Host directory bound read-only at SANDBOX_PATHS.egress, or null when nothing was fetched. */
  egressDir: string | null;
  /** Gives the process a stdin pipe (an MCP stdio server); otherwise stdin is closed. */
  stdin?: boolean;
}

/** How the process tree ended, as the driver saw it. */
export interface DriverExit {
  exitCode: number | null;
  signal: string | null;
  /** A limit the driver itself saw hit (memory, pids, CPU time, file size); the runner adds wall time, output and cancel. */
  limit: ExecLimitName | null;
  /** A computer's link broke before the exit status arrived (why, in words): the outcome is not known. */
  lost?: string | null;
  /** After a kill or a loss on a computer: whether its process group was seen gone. */
  killConfirmed?: boolean | null;
}

/** A started command. */
export interface DriverProcess {
  /** The process's stdin when the exec asked for one (`PreparedExec.stdin`), else null. */
  readonly stdin?: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles once the whole process tree is gone and its resources are released. */
  readonly exited: Promise<DriverExit>;
  /** Kills the whole process tree; resolves when the kill was delivered (await `exited` for the end). */
  kill(): Promise<void>;
  /**
   * Called when the driver sees a limit hit while the command still runs (a fork bomb held at
   * its pids limit, an OOM kill of one child): the runner then ends the command, naming it.
   */
  onLimit(listener: (limit: ExecLimitName) => void): void;
}

export interface DriverProbe {
  available: boolean;
  /** The version found, or what is missing and how to install it. */
  detail: string;
  /** Limits this driver cannot enforce on this host, each with the reason. */
  unenforced: string[];
}

/** One way of running a command in isolation. There is no driver that runs it on the host. */
export interface SandboxDriver {
  readonly name: SandboxDriverName;
  /** Whether the driver can run commands here; probed once at start and on status. */
  probe(): Promise<DriverProbe>;
  /** Starts the command; rejects (with a message for the operator) when it cannot be started at all. */
  start(exec: PreparedExec): Promise<DriverProcess>;
  /**
   * Ends what this driver's commands of services on this host that died left running; answers
   * how many it ended. Absent where nothing can outlive its service (a container is removed).
   */
  reclaim?(): Promise<number>;
}

/** The driver could not start the command (image missing, engine refused...); the exec ends `failed`. */
export class DriverStartError extends Error {
  override readonly name = 'DriverStartError';
}
