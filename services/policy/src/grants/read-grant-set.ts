import type { PoolClient } from 'pg';
import { grantsDigest, storedGrant, type CompiledGrant, type GrantSet } from './compile-grants';

type Queryable = Pick<PoolClient, 'query'>;

/**
 * The compiled grants bound to an effective digest, verified against the digest they were
 * compiled with: `damaged` when they no longer match (they are then never used), null when none.
 */
export async function readGrantSet(db: Queryable, effectiveDigest: string): Promise<GrantSet | 'damaged' | null> {
  const { rows } = await db.query<{ grants: CompiledGrant[]; grants_digest: string }>(
    `SELECT grants, grants_digest FROM policy.grant_sets WHERE effective_digest = $1`,
    [effectiveDigest],
  );
  const row = rows[0];
  if (!row) return null;
  if (grantsDigest(effectiveDigest, row.grants) !== row.grants_digest) return 'damaged';
  return { effectiveDigest, grants: row.grants.map(storedGrant), grantsDigest: row.grants_digest };
}
