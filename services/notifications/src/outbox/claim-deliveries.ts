import type { Pool } from 'pg';
import type { DeliveryRow } from './delivery.rows';

/**
 * Leases up to `limit` due deliveries for `owner`: pending, due, not leased (or the lease
 * lapsed: its holder died), and the oldest pending one of their thread, so one run's messages
 * to one route go out in order. SKIP LOCKED lets replicas claim side by side.
 */
export async function claimDueDeliveries(pool: Pool, input: { owner: string; limit: number; now: Date; leaseMs: number }): Promise<DeliveryRow[]> {
  const { rows } = await pool.query<DeliveryRow>(
    `WITH due AS (
       SELECT d.delivery_id FROM notifications.deliveries d
        WHERE d.state = 'pending' AND d.next_attempt_at <= $3
          AND (d.lease_until IS NULL OR d.lease_until < $3)
          AND NOT EXISTS (SELECT 1 FROM notifications.deliveries e
                           WHERE e.thread_key = d.thread_key AND e.state = 'pending' AND e.delivery_id < d.delivery_id)
        ORDER BY d.next_attempt_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED)
     UPDATE notifications.deliveries d
        SET lease_owner = $1, lease_until = $3::timestamptz + make_interval(secs => $4::double precision / 1000)
       FROM due WHERE d.delivery_id = due.delivery_id
     RETURNING d.*`,
    [input.owner, input.limit, input.now, input.leaseMs],
  );
  return rows;
}

/** When the next pending delivery falls due (null: none pending). */
export async function nextDueAt(pool: Pool): Promise<Date | null> {
  const { rows } = await pool.query<{ at: Date | null }>(
    `SELECT min(GREATEST(next_attempt_at, COALESCE(lease_until, next_attempt_at))) AS at FROM notifications.deliveries WHERE state = 'pending'`,
  );
  return rows[0]?.at ?? null;
}

/** Gives a lease back (this replica is stopping mid-attempt): another replica may send it at once. */
export async function releaseLease(pool: Pool, deliveryId: string, owner: string): Promise<void> {
  await pool.query(`UPDATE notifications.deliveries SET lease_owner = NULL, lease_until = NULL WHERE delivery_id = $1 AND lease_owner = $2 AND state = 'pending'`, [deliveryId, owner]);
}
