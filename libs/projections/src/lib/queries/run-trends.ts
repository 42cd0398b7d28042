import type { Pool, PoolClient } from 'pg';
import { PROJECTOR_SCHEMA } from '../applier';
import { qualified } from '../table';

export type TrendBucket = 'hour' | 'day';

export interface TrendPoint {
  /** Start of the bucket (UTC). */
  start: string;
  started: number;
  succeeded: number;
  /** Every other terminal outcome: failed, cancelled, timed out, rejected, ... */
  failed: number;
  /** Cost of the model turns that happened in the bucket. */
  spendUsd: number;
}

export interface RunTrends {
  bucket: TrendBucket;
  points: TrendPoint[];
}

/** How many buckets a trend covers by default: a day of hours, or two weeks of days. */
export const TREND_BUCKETS: Readonly<Record<TrendBucket, number>> = { hour: 24, day: 14 };

/**
 * Runs started, succeeded and failed and model spend per hour or UTC day, oldest first, with
 * every bucket present (zero when nothing happened). One statement, so all series are read at
 * the same instant. Spend is summed from the model turns of the runs active in the window,
 * found through the runs table so the timeline is read by run rather than scanned.
 */
export async function readRunTrends(
  db: Pool | PoolClient,
  workspaceId: string,
  bucket: TrendBucket,
  options: { buckets?: number; now?: Date; schema?: string } = {},
): Promise<RunTrends> {
  const count = Math.min(Math.max(options.buckets ?? TREND_BUCKETS[bucket], 1), bucket === 'hour' ? 168 : 90);
  const schema = options.schema ?? PROJECTOR_SCHEMA;
  const runs = qualified(schema, 'runs');
  const timeline = qualified(schema, 'run_timeline');
  const { rows } = await db.query<{ start: Date; started: string; succeeded: string; failed: string; spend: number | null }>(
    `WITH params AS (
       SELECT date_trunc($2, coalesce($4::timestamptz, now()) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS last_start, ('1 ' || $2)::interval AS step
     ), buckets AS (
       SELECT generate_series(p.last_start - p.step * ($3::int - 1), p.last_start, p.step) AS start FROM params p
     ), bounds AS (
       SELECT min(start) AS since FROM buckets
     ), window_runs AS (
       SELECT r.run_id, r.state, r.phase, r.created_at, r.ended_at FROM ${runs} r, bounds b
        WHERE r.workspace_id = $1 AND (r.created_at >= b.since OR r.ended_at >= b.since OR r.ended_at IS NULL)
     ), turns AS (
       SELECT t.occurred_at, (t.summary->>'costUsd')::double precision AS cost
         FROM ${timeline} t JOIN window_runs w ON w.run_id = t.run_id, bounds b
        WHERE t.type = 'run.model_turn' AND t.occurred_at >= b.since
     )
     SELECT k.start,
            (SELECT count(*) FROM window_runs w WHERE date_trunc($2, w.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' = k.start) AS started,
            (SELECT count(*) FROM window_runs w WHERE w.phase = 'ended' AND w.state = 'succeeded'
                AND date_trunc($2, w.ended_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' = k.start) AS succeeded,
            (SELECT count(*) FROM window_runs w WHERE w.phase = 'ended' AND w.state <> 'succeeded'
                AND date_trunc($2, w.ended_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' = k.start) AS failed,
            (SELECT sum(cost) FROM turns u WHERE date_trunc($2, u.occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' = k.start) AS spend
       FROM buckets k
      ORDER BY k.start`,
    [workspaceId, bucket, count, options.now?.toISOString() ?? null],
  );
  return {
    bucket,
    points: rows.map((row) => ({
      start: row.start.toISOString(),
      started: Number(row.started),
      succeeded: Number(row.succeeded),
      failed: Number(row.failed),
      spendUsd: Number(row.spend ?? 0),
    })),
  };
}
