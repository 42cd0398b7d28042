import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runner } from 'node-pg-migrate';
import { Client, Pool } from 'pg';
import { databaseUrlFor, testEnv } from './env';

// Read by path, not imported: the harness depends on no project library, so every library's
// tests can use it without a dependency cycle.
const MIGRATIONS_DIR = resolve(__dirname, '../../../eventstore/migrations');

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(file).update(readFileSync(join(MIGRATIONS_DIR, file)));
  }
  return hash.digest('hex').slice(0, 12);
}

async function withAdmin<T>(fn: (admin: Client) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: testEnv.databaseUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/**
 * A migrated template database, built once per migration set; parallel test files serialise on
 * an advisory lock while it is built.
 */
async function ensureTemplate(): Promise<string> {
  const template = `pa_tpl_${migrationsHash()}`;
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(727274, 1)');
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (rowCount) return;
      await admin.query(`CREATE DATABASE ${template}`);
      await runner({
        databaseUrl: databaseUrlFor(testEnv.databaseUrl, template),
        dir: MIGRATIONS_DIR,
        migrationsTable: 'pgmigrations',
        direction: 'up',
        checkOrder: true,
        singleTransaction: true,
        log: () => undefined,
      });
    } finally {
      await admin.query('SELECT pg_advisory_unlock(727274, 1)');
    }
  });
  return template;
}

/**
 * A fresh, migrated database for one test file, cloned from the template; drop() removes it.
 * `empty: true` gives a database with no schema at all, for tests of migration itself.
 */
export async function createTestDatabase(options: { max?: number; empty?: boolean } = {}): Promise<TestDatabase> {
  const template = options.empty ? 'template0' : await ensureTemplate();
  const name = `pa_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await withAdmin(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(727274, 2)');
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(727274, 2)');
    }
  });
  const url = databaseUrlFor(testEnv.databaseUrl, name);
  const pool = new Pool({ connectionString: url, max: options.max ?? 10 });
  pool.on('error', () => undefined);
  return {
    name,
    url,
    pool,
    drop: async () => {
      await pool.end();
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
