import { join } from 'node:path';
import { runner } from 'node-pg-migrate';
import type { ClientBase } from 'pg';

export const MIGRATIONS_DIR = join(__dirname, '..', '..', 'migrations');

/**
 * Applies pending migrations (node-pg-migrate, SQL files in libs/eventstore/migrations) under
 * its advisory lock, so replicas starting together migrate once.
 */
export async function migrateDatabase(
  target: { databaseUrl: string } | { client: ClientBase },
  log: (message: string) => void = () => undefined,
): Promise<string[]> {
  const connection = 'client' in target ? { dbClient: target.client } : { databaseUrl: target.databaseUrl };
  const applied = await runner({
    ...connection,
    dir: MIGRATIONS_DIR,
    migrationsTable: 'pgmigrations',
    direction: 'up',
    count: Infinity,
    checkOrder: true,
    singleTransaction: true,
    log,
    logger: { debug: () => undefined, info: log, warn: log, error: log },
  });
  return applied.map((migration) => migration.name);
}
