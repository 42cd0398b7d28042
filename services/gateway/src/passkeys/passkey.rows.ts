import type { Pool, PoolClient } from 'pg';
import type { PasskeyView } from './passkeys.dto';

export interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Buffer;
  /** bigint arrives as text from pg. */
  counter: string;
  transports: string[];
  name: string;
  device_type: 'singleDevice' | 'multiDevice';
  backed_up: boolean;
  created_at: Date;
  last_used_at: Date | null;
  last_counter_regression_at: Date | null;
}

const COLUMNS = `p.id, p.user_id, p.credential_id, p.public_key, p.counter, p.transports, p.name, p.device_type, p.backed_up, p.created_at, p.last_used_at,
  (SELECT max(r.refused_at) FROM identity.passkey_counter_regressions r WHERE r.passkey_id = p.id) AS last_counter_regression_at`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function passkeysOf(db: Pool | PoolClient, userId: string): Promise<PasskeyRow[]> {
  const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM identity.passkeys p WHERE p.user_id = $1 ORDER BY p.created_at, p.id`, [userId]);
  return rows;
}

/** One of the user's passkeys; null for an id that is not a passkey of theirs (or not an id at all). */
export function isPasskeyId(value: string): boolean {
  return UUID.test(value);
}

export async function passkeyOf(db: Pool | PoolClient, userId: string, passkeyId: string): Promise<PasskeyRow | null> {
  if (!isPasskeyId(passkeyId)) return null;
  const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM identity.passkeys p WHERE p.id = $1 AND p.user_id = $2`, [passkeyId, userId]);
  return rows[0] ?? null;
}

export async function passkeyByCredentialId(db: Pool | PoolClient, credentialId: string): Promise<PasskeyRow | null> {
  const { rows } = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM identity.passkeys p WHERE p.credential_id = $1`, [credentialId]);
  return rows[0] ?? null;
}

export function toPasskeyView(row: PasskeyRow): PasskeyView {
  return {
    id: row.id,
    name: row.name,
    transports: row.transports,
    synced: row.device_type === 'multiDevice',
    backedUp: row.backed_up,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    lastCounterRegressionAt: row.last_counter_regression_at?.toISOString() ?? null,
  };
}
