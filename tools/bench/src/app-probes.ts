/** What the benchmark reads off the app under test: its database's counters, its metrics, the events it wrote. */
import { runStreamId } from '@packetagent/contracts';
import type { App } from './app-process';
import { sleep } from './stats';

export async function admittedCount(app: App, runIds: string[]): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE type = 'run.admitted' AND stream_id = ANY($1)`, [runIds.map(runStreamId)]);
  return rows[0]!.n;
}

/** Transactions committed and rolled back in the app's database so far (pg_stat_database); waits first for backends to report, which they do at most once a second. */
async function databaseTransactions(app: App): Promise<{ committed: number; rolledBack: number }> {
  await sleep(1_500);
  const { rows } = await app.db.pool.query<{ c: string; r: string }>(`SELECT xact_commit AS c, xact_rollback AS r FROM pg_stat_database WHERE datname = current_database()`);
  return { committed: Number(rows[0]?.c ?? Number.NaN), rolledBack: Number(rows[0]?.r ?? Number.NaN) };
}

/**
 * The app's event-loop delay since the last scrape of its metrics: prom-client's
 * monitorEventLoopDelay histogram (reset at each scrape) records the intervals between ticks of a
 * 10 ms timer, so the delay is what exceeds 10 ms.
 */
export async function eventLoopDelay(app: App): Promise<{ p50: number; p99: number; max: number }> {
  const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
  const read = (name: string) => Math.max(0, 1_000 * Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) - 10);
  return { p50: read('nodejs_eventloop_lag_p50_seconds'), p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

export const rollbacks = async (app: App) => (await databaseTransactions(app)).rolledBack;
/** Statements in autocommit count one each; the benchmark's own two reads of the counters are included. */
export const transactions = async (app: App) => {
  const { committed, rolledBack } = await databaseTransactions(app);
  return committed + rolledBack;
};
