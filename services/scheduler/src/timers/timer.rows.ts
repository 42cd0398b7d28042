import type { PoolClient } from 'pg';
import { timerStream, type Actor, type JsonValue, type TimerView } from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import { evolve, initialTimer, type ExistingTimer, type Timer, type TimerEvent } from './timer.decider';

interface TimerRow {
  timer_id: string;
  workspace_id: string;
  purpose: string;
  due_at: Date;
  state: 'pending' | 'fired' | 'cancelled';
  payload: JsonValue;
  fired_at: Date | null;
  stream_version: string;
}

function fromRow(row: TimerRow): ExistingTimer {
  return {
    status: row.state,
    timerId: row.timer_id,
    workspaceId: row.workspace_id,
    purpose: row.purpose,
    dueAt: row.due_at.toISOString(),
    payload: row.payload,
    firedAt: row.fired_at ? row.fired_at.toISOString() : null,
    version: Number(row.stream_version),
  };
}

/** The timer's current state, row-locked until the transaction ends; `absent` (for `workspaceId`) when never set. */
export async function loadTimerForUpdate(client: PoolClient, timerId: string, workspaceId: string): Promise<Timer> {
  const { rows } = await client.query<TimerRow>(`SELECT * FROM scheduler.timers WHERE timer_id = $1 FOR UPDATE`, [timerId]);
  return rows[0] ? fromRow(rows[0]) : initialTimer(timerId, workspaceId);
}

export async function readTimer(client: Pick<PoolClient, 'query'>, timerId: string): Promise<ExistingTimer | null> {
  const { rows } = await client.query<TimerRow>(`SELECT * FROM scheduler.timers WHERE timer_id = $1`, [timerId]);
  return rows[0] ? fromRow(rows[0]) : null;
}

/**
 * Appends the decided events to `timer-<id>` at the version the row says, and writes the folded
 * state back, inside the caller's transaction. A concurrent writer makes the append fail with a
 * ConcurrencyError and nothing of the transaction remains.
 */
export async function commitTimerEvents(
  store: PostgresEventStore,
  client: PoolClient,
  timer: Timer,
  events: TimerEvent[],
  actor: Actor,
): Promise<ExistingTimer> {
  await store.append(
    timerStream(timer.timerId),
    timer.version === 0 ? 'no_stream' : timer.version,
    events.map((event) => ({ type: event.type, schemaVersion: 1, data: event.data, actor })),
    { workspaceId: timer.workspaceId, client },
  );
  const next = events.reduce<Timer>((state, event) => evolve(state, event), timer) as ExistingTimer;
  await client.query(
    `INSERT INTO scheduler.timers (timer_id, workspace_id, purpose, due_at, state, payload, fired_at, stream_version)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)
     ON CONFLICT (timer_id) DO UPDATE
       SET purpose = EXCLUDED.purpose, due_at = EXCLUDED.due_at, state = EXCLUDED.state, payload = EXCLUDED.payload,
           fired_at = EXCLUDED.fired_at, stream_version = EXCLUDED.stream_version, updated_at = now()`,
    [next.timerId, next.workspaceId, next.purpose, next.dueAt, next.status, JSON.stringify(next.payload), next.firedAt, next.version],
  );
  return next;
}

export function toView(timer: ExistingTimer): TimerView {
  return {
    timerId: timer.timerId,
    workspaceId: timer.workspaceId,
    purpose: timer.purpose,
    dueAt: timer.dueAt,
    state: timer.status,
    payload: timer.payload,
    firedAt: timer.firedAt,
    version: timer.version,
  };
}
