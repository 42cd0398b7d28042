import { join } from 'node:path';
import { ExecLimitsSchema, type ExecLimits, type SandboxDriverName } from '@packetagent/contracts';

export type SandboxLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface SandboxModuleOptions {
  /** Run workspaces are `<dataDir>/runs/<runId>/workspace` (the supervisor makes them there); scratch and operator workspaces live beside them. */
  dataDir: string;
  /** `auto` takes bubblewrap, then Docker, whichever is available; a named driver is the only one tried. */
  driver?: 'auto' | SandboxDriverName;
  /** Limits of a request that names none. */
  defaults?: Partial<ExecLimits>;
  /** The most a request may ask for. */
  maximum?: Partial<ExecLimits>;
  /** Environment names a command may be given (never one that looks like a secret). */
  envAllowlist?: readonly string[];
  /** Origins (`https://host[:port]`) declared egress may be fetched from, GET only. */
  egressOrigins?: readonly string[];
  /** `host:port` pairs egress and the browser may reach although they resolve to private addresses. */
  allowPrivate?: readonly string[];
  /** Docker driver: the engine (`unix:///path`, `tcp://host:port`; DOCKER_HOST's or the default socket when absent) and the image. */
  docker?: { host?: string; image?: string; user?: string };
  bubblewrap?: { bwrapPath?: string; uid?: number; gid?: number };
  /** Chromium for the browser tool. */
  chromiumPath?: string;
  /** Bytes of each stream kept in the result's preview. */
  previewBytes?: number;
  /** Identifies this replica, so a cancel can be forwarded to the one running the exec. */
  replicaId?: string;
  /** Computers over SSH: how often the leader probes, when status goes stale, and connection timings. */
  computers?: Partial<ComputerOptions>;
  log?: SandboxLog;
}

export interface ComputerOptions {
  /** The probe leader probes every ssh computer this often. */
  probeIntervalMs: number;
  /** `online` only this long after a successful probe was received; `unknown` past it. */
  staleAfterMs: number;
  /** Connect, key exchange and authentication together. */
  connectTimeoutMs: number;
  keepaliveMs: number;
  /** A warm connection unused this long is closed. */
  idleMs: number;
}

export const DEFAULT_COMPUTER_OPTIONS: ComputerOptions = { probeIntervalMs: 15_000, staleAfterMs: 45_000, connectTimeoutMs: 10_000, keepaliveMs: 5_000, idleMs: 60_000 };

export const SANDBOX_OPTIONS = Symbol('SANDBOX_OPTIONS');

export const DEFAULT_EXEC_LIMITS: ExecLimits = {
  wallTimeMs: 10 * 60_000,
  cpuSeconds: 600,
  memoryBytes: 1024 ** 3,
  pids: 256,
  fileSizeBytes: 1024 ** 3,
  openFiles: 1024,
  outputBytes: 128 * 1024 ** 2,
  tmpBytes: 512 * 1024 ** 2,
};

export const MAXIMUM_EXEC_LIMITS: ExecLimits = {
  wallTimeMs: 60 * 60_000,
  cpuSeconds: 3_600,
  memoryBytes: 8 * 1024 ** 3,
  pids: 4_096,
  fileSizeBytes: 8 * 1024 ** 3,
  openFiles: 65_536,
  outputBytes: 512 * 1024 ** 2,
  tmpBytes: 4 * 1024 ** 3,
};

/** Names every command may be given; the operator's list adds to it. */
export const BASE_ENV_ALLOWLIST = ['CI', 'NODE_ENV', 'LANG', 'LC_ALL', 'TZ', 'TERM', 'DEBUG', 'NO_COLOR', 'FORCE_COLOR'];

export interface ResolvedSandboxOptions {
  dataDir: string;
  runsDir: string;
  scratchDir: string;
  operatorDir: string;
  driver: 'auto' | SandboxDriverName;
  defaults: ExecLimits;
  maximum: ExecLimits;
  envAllowlist: string[];
  egressOrigins: string[];
  allowPrivate: string[];
  docker: { host?: string; image: string; user: string };
  bubblewrap: { bwrapPath?: string; uid?: number; gid?: number };
  chromiumPath: string;
  previewBytes: number;
  replicaId: string;
  computers: ComputerOptions;
  log: SandboxLog;
}

/**
 * Containers run as the service's own uid, which owns the run workspaces, unless that is root:
 * then as 65534, and the workspace must be writable by it.
 */
function defaultContainerUser(): string {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  return uid === undefined || gid === undefined || uid === 0 ? '65534:65534' : `${uid}:${gid}`;
}

function origin(raw: string): string {
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`sandbox egress origin ${raw} must be http(s)`);
  return url.origin;
}

export function resolveSandboxOptions(options: SandboxModuleOptions): ResolvedSandboxOptions {
  const maximum = ExecLimitsSchema.parse({ ...MAXIMUM_EXEC_LIMITS, ...options.maximum });
  const defaults = ExecLimitsSchema.parse({ ...DEFAULT_EXEC_LIMITS, ...options.defaults });
  for (const [name, value] of Object.entries(defaults) as Array<[keyof ExecLimits, number]>) {
    if (value > maximum[name]) throw new Error(`sandbox default limit ${name} (${value}) is above its maximum (${maximum[name]})`);
  }
  const sandboxDir = join(options.dataDir, 'sandbox');
  return {
    dataDir: options.dataDir,
    runsDir: join(options.dataDir, 'runs'),
    scratchDir: join(sandboxDir, 'scratch'),
    operatorDir: join(sandboxDir, 'operator'),
    driver: options.driver ?? 'auto',
    defaults,
    maximum,
    envAllowlist: [...new Set([...BASE_ENV_ALLOWLIST, ...(options.envAllowlist ?? [])])].sort(),
    egressOrigins: (options.egressOrigins ?? []).map(origin),
    allowPrivate: [...(options.allowPrivate ?? [])],
    docker: { ...options.docker, image: options.docker?.image ?? 'node:20-bookworm-slim', user: options.docker?.user ?? defaultContainerUser() },
    bubblewrap: { ...options.bubblewrap },
    chromiumPath: options.chromiumPath ?? '/usr/bin/chromium',
    previewBytes: options.previewBytes ?? 16 * 1024,
    replicaId: options.replicaId ?? `sandbox-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    computers: { ...DEFAULT_COMPUTER_OPTIONS, ...options.computers },
    log: options.log ?? (() => undefined),
  };
}
