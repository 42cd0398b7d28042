/**
 * Counts the write transactions of one database between two WAL positions, from the WAL itself
 * (pg_walinspect), grouped by what they wrote. With synchronous_commit on, each one waited for a
 * WAL flush at its commit; transactions that took an id but wrote nothing are not counted. The
 * WAL is the server's, so only records of the database's own relations are attributed to it.
 */
import type { Pool } from 'pg';

export interface WalWrites {
  transactions: number;
  /** Transactions by the tables they wrote: a public table by name, any other schema by its name. */
  byTables: Record<string, number>;
}

/** Installs pg_walinspect in the database; false where that is not allowed (it needs a superuser). */
export async function enableWalInspect(pool: Pool): Promise<boolean> {
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    return true;
  } catch {
    return false;
  }
}

/** The WAL position up to which everything is flushed: the end of what a committed transaction wrote. */
export async function walFlushed(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn');
  return rows[0]!.lsn;
}

export async function walWrites(pool: Pool, from: string, to: string): Promise<WalWrites> {
  const { rows: written } = await pool.query<{ xid: string; filenodes: string[] }>(
    // xid has no ordering to group by: its text form (a 32-bit number) does.
    `WITH wal AS MATERIALIZED (
            SELECT xid::text::bigint AS xid, resource_manager, record_type, block_ref
              FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) WHERE xid <> '0'::xid),
          here AS (SELECT oid::text AS db FROM pg_database WHERE datname = current_database()),
          touched AS (
            SELECT w.xid, m[2] AS filenode
              FROM wal w, LATERAL regexp_matches(coalesce(w.block_ref, ''), 'rel \\d+/(\\d+)/(\\d+)', 'g') AS m, here
             WHERE m[1] = here.db)
     SELECT t.xid::text AS xid, array_agg(DISTINCT t.filenode) AS filenodes
       FROM touched t
      WHERE t.xid IN (SELECT xid FROM wal WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%')
      GROUP BY t.xid`,
    [from, to],
  );
  // An index or a TOAST table counts as the table it belongs to.
  const { rows: relations } = await pool.query<{ filenode: string; schema: string; name: string }>(
    `SELECT c.relfilenode::text AS filenode, n.nspname AS schema, owner.relname AS name
       FROM pg_class c
       LEFT JOIN pg_index i ON i.indexrelid = c.oid
       LEFT JOIN pg_class toast_owner ON toast_owner.reltoastrelid = coalesce(i.indrelid, c.oid)
       JOIN pg_class owner ON owner.oid = coalesce(toast_owner.oid, i.indrelid, c.oid)
       JOIN pg_namespace n ON n.oid = owner.relnamespace
      WHERE c.relfilenode <> 0`,
  );
  const label = new Map(relations.map((relation) => [relation.filenode, relation.schema === 'public' ? relation.name : relation.schema]));
  const byTables: Record<string, number> = {};
  for (const row of written) {
    const tables = [...new Set(row.filenodes.map((filenode) => label.get(filenode) ?? 'system catalogs'))].sort().join(' + ');
    byTables[tables] = (byTables[tables] ?? 0) + 1;
  }
  return { transactions: written.length, byTables };
}
