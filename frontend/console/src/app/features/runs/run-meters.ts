import { formatUsd } from '../../shared/format';
import type { RunEvent } from '../../shared/timeline';
import type { RunSummary } from './runs.api';

/** One bound of a run as a labelled bar: how much is used of how much is allowed. */
export interface Meter {
  label: string;
  used: number;
  /** Null when nothing bounds it (a run's tokens, or cost when only the ledger limits it). */
  limit: number | null;
  /** "3 of 10", "$0.25 of $2.00", "1m 05s of 10m 00s". */
  text: string;
  /** Used over limit, 0..1; null without a limit. */
  ratio: number | null;
}

function meter(label: string, used: number, limit: number | null, format: (n: number) => string): Meter {
  const ratio = limit !== null && limit > 0 ? Math.min(1, Math.max(0, used / limit)) : null;
  return { label, used, limit, text: limit === null ? `${format(used)} (no limit)` : `${format(used)} of ${format(limit)}`, ratio };
}

export function formatSeconds(total: number): string {
  const seconds = Math.max(0, Math.round(total));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h ${String(m).padStart(2, '0')}m` : `${m}m ${String(s).padStart(2, '0')}s`;
}

const count = (n: number) => String(Math.round(n));

/** Tokens the run's model turns used, input and output together. */
export function tokensUsed(events: readonly RunEvent[]): number {
  let total = 0;
  for (const event of events) {
    if (event.type !== 'run.model_turn') continue;
    const usage = event.data['usage'] as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
    for (const part of [usage?.inputTokens, usage?.outputTokens]) if (typeof part === 'number' && Number.isFinite(part)) total += part;
  }
  return total;
}

/** Steps, tool calls, tokens, cost and wall time of a run against its bounds; empty before it starts. */
export function runMeters(summary: RunSummary, events: readonly RunEvent[], nowMs: number): Meter[] {
  const bounds = summary.bounds;
  if (!bounds) return [];
  const started = summary.startedAt ? Date.parse(summary.startedAt) : NaN;
  const until = summary.endedAt ? Date.parse(summary.endedAt) : nowMs;
  const wallSeconds = Number.isNaN(started) ? 0 : Math.max(0, (until - started) / 1000);
  return [
    meter('Steps (model turns)', summary.iteration, bounds.maxIterations, count),
    meter('Tool calls', summary.toolCalls, bounds.maxToolCalls, count),
    meter('Tokens', tokensUsed(events), null, (n) => Math.round(n).toLocaleString('en-US')),
    meter('Cost', summary.costUsd, bounds.maxCostUsd, formatUsd),
    meter('Wall time', wallSeconds, bounds.maxWallSeconds, formatSeconds),
  ];
}

/** "850 ms", "12.5 s", "3m 05s", "1h 02m": how long a run took. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return formatSeconds(ms / 1000);
}
