import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { PostgresEventStore, type NewEvent } from '@packetagent/eventstore';
import { now, summarise, type Summary } from './stats';

export interface AppendCase {
  clients: number;
  eventsPerAppend: number;
  appendsPerClient: number;
}

export interface AppendResult {
  case: AppendCase;
  kind: 'event store append' | 'raw INSERT';
  latencyMs: Summary;
  eventsPerSecond: number;
}

const actor = { kind: 'system', id: 'bench' } as const;
const payload = (i: number) => ({ runId: `run-${i}`, step: i, note: 'benchmark payload of a typical size', tags: ['a', 'b', 'c'] });

/** A plain table with the same columns as events, no constraints beyond a primary key. */
export async function createRawTable(pool: Pool): Promise<void> {
  await pool.query(`CREATE TABLE IF NOT EXISTS bench_raw (
    global_position bigserial PRIMARY KEY, event_id uuid NOT NULL, stream_id text NOT NULL, stream_version bigint NOT NULL,
    type text NOT NULL, schema_version integer NOT NULL, workspace_id text NOT NULL, occurred_at timestamptz NOT NULL,
    data jsonb NOT NULL, metadata jsonb NOT NULL, digest char(64) NOT NULL, prev_digest char(64))`);
}

async function runClients(clients: number, work: (client: number) => Promise<number[]>): Promise<{ latencies: number[]; seconds: number }> {
  const started = now();
  const perClient = await Promise.all(Array.from({ length: clients }, (_, c) => work(c)));
  return { latencies: perClient.flat(), seconds: (now() - started) / 1_000 };
}

export async function benchStoreAppend(pool: Pool, spec: AppendCase, tag: string): Promise<AppendResult> {
  const store = new PostgresEventStore(pool, { doorbellChannel: null });
  const { latencies, seconds } = await runClients(spec.clients, async (client) => {
    const stream = `bench-${tag}-${client}`;
    const out: number[] = [];
    for (let i = 0; i < spec.appendsPerClient; i++) {
      const events: NewEvent[] = Array.from({ length: spec.eventsPerAppend }, (_, e) => ({ type: 'bench.happened', schemaVersion: 1, data: payload(e), actor }));
      const t0 = now();
      await store.append(stream, i * spec.eventsPerAppend, events, { workspaceId: 'bench' });
      out.push(now() - t0);
    }
    return out;
  });
  return { case: spec, kind: 'event store append', latencyMs: summarise(latencies), eventsPerSecond: (latencies.length * spec.eventsPerAppend) / seconds };
}

export async function benchRawInsert(pool: Pool, spec: AppendCase, tag: string): Promise<AppendResult> {
  const metadata = JSON.stringify({ causationId: null, correlationId: null, traceparent: null, actor });
  const digest = 'a'.repeat(64);
  const { latencies, seconds } = await runClients(spec.clients, async (client) => {
    const stream = `bench-${tag}-${client}`;
    const out: number[] = [];
    for (let i = 0; i < spec.appendsPerClient; i++) {
      const values: unknown[] = [];
      const rows: string[] = [];
      for (let e = 0; e < spec.eventsPerAppend; e++) {
        const b = values.length;
        rows.push(`($${b + 1}, $${b + 2}, $${b + 3}, 'bench.happened', 1, 'bench', now(), $${b + 4}, $${b + 5}, $${b + 6}, $${b + 6})`);
        values.push(randomUUID(), stream, i * spec.eventsPerAppend + e + 1, JSON.stringify(payload(e)), metadata, digest);
      }
      const t0 = now();
      await pool.query(
        `INSERT INTO bench_raw (event_id, stream_id, stream_version, type, schema_version, workspace_id, occurred_at, data, metadata, digest, prev_digest)
         VALUES ${rows.join(', ')}`,
        values,
      );
      out.push(now() - t0);
    }
    return out;
  });
  return { case: spec, kind: 'raw INSERT', latencyMs: summarise(latencies), eventsPerSecond: (latencies.length * spec.eventsPerAppend) / seconds };
}
