import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { readdirSync } from 'node:fs';
import { migrateDatabase, MIGRATIONS_DIR } from './migrate';

describe(migrateDatabase.name, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(() => db.drop());

  it('migrates once when several replicas start together, and none of them fails', async () => {
    const results = await Promise.all([1, 2, 3].map(() => migrateDatabase({ databaseUrl: db.url })));

    expect(results.filter((applied) => applied.length > 0)).toHaveLength(1);
    const files = readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.sql')).map((file) => file.replace(/\.sql$/, '')).sort();
    expect(results.flat()).toEqual(files);
    const { rows } = await db.pool.query(`SELECT count(*) FROM pgmigrations`);
    expect(Number(rows[0].count)).toBe(files.length);
  });
});
