import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { ProviderRouter } from '@packetagent/providers';
import type { ToolRegistry, ToolsConfig } from '@packetagent/tools';

export const SUPERVISOR_OPTIONS = Symbol('SUPERVISOR_OPTIONS');
export const PROVIDER_ROUTER = Symbol('PROVIDER_ROUTER');
export const TOOL_REGISTRY = Symbol('TOOL_REGISTRY');

export interface SupervisorModuleOptions {
  /** This replica's name in claims and events; host, pid and a random suffix by default. */
  replicaId?: string;
  /** How long a claim lasts without renewal, in milliseconds; also the JetStream ack wait of wake messages. */
  leaseMs?: number;
  /** Runs one replica drives at once. */
  concurrency?: number;
  /** How often lapsed claims are looked for, in milliseconds. */
  recoveryIntervalMs?: number;
  /** Where each run's working directory is created (`<dataDir>/runs/<runId>/workspace`). */
  dataDir?: string;
  /** Model turns in a row without progress before a run ends failed(stalled). */
  stallTurns?: number;
  /** Share of the model's context window at which older turns are compacted. */
  compactAtRatio?: number;
  tools?: Partial<ToolsConfig>;
  /** Provider keys and endpoints (see libs/providers); process.env when absent. */
  providerEnv?: Record<string, string | undefined>;
  /** Test hook: SIGKILL this process right after appending the first event of this type. */
  crashAfter?: string;
  /** Providers and tools to use instead of the ones built from the environment (tests, embedding). */
  router?: ProviderRouter;
  registry?: ToolRegistry;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export interface SupervisorOptions {
  replicaId: string;
  leaseMs: number;
  concurrency: number;
  recoveryIntervalMs: number;
  dataDir: string;
  stallTurns: number;
  compactAtRatio: number;
  tools: Partial<ToolsConfig>;
  crashAfter: string | null;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export function resolveSupervisorOptions(options: SupervisorModuleOptions): SupervisorOptions {
  return {
    replicaId: options.replicaId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    leaseMs: options.leaseMs ?? 15_000,
    concurrency: options.concurrency ?? 32,
    recoveryIntervalMs: options.recoveryIntervalMs ?? 500,
    dataDir: options.dataDir ?? '.packetagent',
    stallTurns: options.stallTurns ?? 3,
    compactAtRatio: options.compactAtRatio ?? 0.8,
    tools: options.tools ?? {},
    crashAfter: options.crashAfter ?? null,
    log: options.log ?? (() => undefined),
  };
}
