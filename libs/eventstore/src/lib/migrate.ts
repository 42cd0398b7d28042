import { join } from 'node:path';
import { runner } from 'node-pg-migrate';
import { Client } from 'pg';

export const MIGRATIONS_DIR = join(__dirname, '..', '..', 'migrations');

/** Key of the session advisory lock that serialises migrations across replicas. */
const MIGRATION_LOCK = [0x5041_4d47, 1] as const; // "PAMG"

/**
 * Applies pending migrations (node-pg-migrate, SQL files in libs/eventstore/migrations).
 * Replicas starting together queue on a blocking advisory lock, so the first migrates and
 * the others find nothing left to do (node-pg-migrate's own lock would fail them instead).
 */
export async function migrateDatabase(
  target: { databaseUrl: string },
  log: (message: string) => void = () => undefined,
): Promise<string[]> {
  const client = new Client({ connectionString: target.databaseUrl, application_name: 'pa-migrate' });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATION_LOCK]);
    const applied = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      migrationsTable: 'pgmigrations',
      direction: 'up',
      count: Infinity,
      checkOrder: true,
      singleTransaction: true,
      noLock: true,
      log,
      logger: { debug: () => undefined, info: log, warn: log, error: log },
    });
    return applied.map((migration) => migration.name);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, $2)', [...MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
}
