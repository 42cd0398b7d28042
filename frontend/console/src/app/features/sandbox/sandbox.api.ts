/** Shapes of the gateway's sandbox routes (SandboxCommands in libs/contracts sandbox.commands.v1.ts). */

export type ExecStream = 'stdout' | 'stderr';
export type ExecState = 'running' | 'exited' | 'killed' | 'failed';

export interface ExecLimits {
  wallTimeMs: number;
  cpuSeconds: number;
  memoryBytes: number;
  pids: number;
  fileSizeBytes: number;
  openFiles: number;
  outputBytes: number;
  tmpBytes: number;
}

export interface ExecStreamOutput {
  preview: string;
  bytes: number;
  truncated: boolean;
  digest: string;
}

export interface ExecResult {
  execId: string;
  workspaceId: string;
  runId: string | null;
  driver: string;
  state: Exclude<ExecState, 'running'>;
  exitCode: number | null;
  signal: string | null;
  limit: string | null;
  message: string | null;
  durationMs: number;
  stdout: ExecStreamOutput;
  stderr: ExecStreamOutput;
  limits: ExecLimits;
  unenforced: string[];
  startedAt: string;
  endedAt: string;
}

export interface ExecSummary {
  execId: string;
  runId: string | null;
  argv: string[];
  cwd: string;
  state: ExecState;
  driver: string | null;
  exitCode: number | null;
  limit: string | null;
  requestedBy: { kind: string; id: string };
  startedAt: string;
  endedAt: string | null;
}

export interface ExecRecord extends ExecSummary {
  result: ExecResult | null;
}

/** POST .../sandbox/exec: 202 once started. */
export interface ExecAccepted {
  execId: string;
  state: 'running';
  links: { self: string; stream: string; output: string; cancel: string };
}

export interface DriverStatus {
  name: string;
  available: boolean;
  detail: string;
  unenforced: string[];
}

export interface SandboxStatus {
  driver: string | null;
  drivers: DriverStatus[];
  defaults: ExecLimits;
  maximum: ExecLimits;
  envAllowlist: string[];
  egressOrigins: string[];
  browser: { available: boolean; detail: string };
}

export function sandboxBase(workspaceId: string | null): string {
  return `/api/v1/workspaces/${workspaceId}/sandbox`;
}

export function execPath(workspaceId: string | null, execId: string): string {
  return `${sandboxBase(workspaceId)}/exec/${encodeURIComponent(execId)}`;
}
