export type ProjectorLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface ProjectorModuleOptions {
  /** False serves the overview and summaries without consuming events (another replica projects). */
  consume?: boolean;
  /** Name of the relay cursor whose lag the overview reports. */
  relayName?: string;
  /** Relay lag above which the overview reports `degraded`, in milliseconds. */
  degradedRelayLagMs?: number;
  /** Unprojected events of a workspace above which the overview reports `degraded`. */
  degradedProjectionLagEvents?: number;
  /** How long the overview waits for the budget ledger, in milliseconds. */
  budgetTimeoutMs?: number;
  log?: ProjectorLog;
}

export type ResolvedProjectorOptions = Required<ProjectorModuleOptions>;

export const PROJECTOR_OPTIONS = Symbol('PROJECTOR_OPTIONS');

export function resolveProjectorOptions(options: ProjectorModuleOptions = {}): ResolvedProjectorOptions {
  const resolved: ResolvedProjectorOptions = {
    consume: options.consume ?? true,
    relayName: options.relayName ?? 'default',
    degradedRelayLagMs: options.degradedRelayLagMs ?? 30_000,
    degradedProjectionLagEvents: options.degradedProjectionLagEvents ?? 1_000,
    budgetTimeoutMs: options.budgetTimeoutMs ?? 2_000,
    log: options.log ?? (() => undefined),
  };
  if (!Number.isInteger(resolved.degradedRelayLagMs) || resolved.degradedRelayLagMs < 0) throw new Error('projector option degradedRelayLagMs must be a non-negative integer of milliseconds');
  if (!Number.isInteger(resolved.degradedProjectionLagEvents) || resolved.degradedProjectionLagEvents < 0) {
    throw new Error('projector option degradedProjectionLagEvents must be a non-negative integer');
  }
  if (!Number.isInteger(resolved.budgetTimeoutMs) || resolved.budgetTimeoutMs < 1) throw new Error('projector option budgetTimeoutMs must be a positive integer of milliseconds');
  return resolved;
}
