import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { ProviderRouter } from '@packetagent/providers';
import type { ToolRegistry, ToolsConfig } from '@packetagent/tools';
import type { FaultPort } from './execution/ports';

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
  /** How often the leader replica looks for runs no one drives (the stuck-run watchdog), in milliseconds. */
  watchdogIntervalMs?: number;
  /** How long a run may go without an owner before the watchdog counts it and acts, in milliseconds. */
  watchdogGraceMs?: number;
  /** The outbox relay whose cursor bounds the admissions the watchdog looks at (`relay_cursors.name`). */
  relayName?: string;
  /** Where each run's working directory is created (`<dataDir>/runs/<runId>/workspace`). */
  dataDir?: string;
  /** Model turns in a row without progress before a run ends failed(stalled). */
  stallTurns?: number;
  /** Share of the model's context window at which older turns are compacted. */
  compactAtRatio?: number;
  tools?: Partial<ToolsConfig>;
  /** Provider keys and endpoints (see libs/providers); process.env when absent. */
  providerEnv?: Record<string, string | undefined>;
  /** Model transcripts, tool arguments and tool results larger than this go to the payload store by reference, in bytes. */
  payloadThresholdBytes?: number;
  /** Test wiring only: told of every append, so a recovery test can kill the process at an exact point. */
  faults?: FaultPort;
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
  watchdogIntervalMs: number;
  watchdogGraceMs: number;
  relayName: string;
  dataDir: string;
  stallTurns: number;
  compactAtRatio: number;
  tools: Partial<ToolsConfig>;
  faults: FaultPort | null;
  payloadThresholdBytes: number;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export function resolveSupervisorOptions(options: SupervisorModuleOptions): SupervisorOptions {
  return {
    replicaId: options.replicaId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    leaseMs: options.leaseMs ?? 15_000,
    concurrency: options.concurrency ?? 32,
    recoveryIntervalMs: options.recoveryIntervalMs ?? 500,
    watchdogIntervalMs: options.watchdogIntervalMs ?? 5_000,
    watchdogGraceMs: options.watchdogGraceMs ?? 30_000,
    relayName: options.relayName ?? 'default',
    dataDir: options.dataDir ?? '.packetagent',
    stallTurns: options.stallTurns ?? 3,
    compactAtRatio: options.compactAtRatio ?? 0.8,
    tools: options.tools ?? {},
    faults: options.faults ?? null,
    payloadThresholdBytes: options.payloadThresholdBytes ?? 64 * 1024,
    log: options.log ?? (() => undefined),
  };
}
