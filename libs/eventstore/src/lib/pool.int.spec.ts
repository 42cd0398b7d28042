import type { EventEmitter } from 'node:events';
import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { PostgresEventStore } from './event-store';
import { createPool } from './pool';

describe(createPool.name, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it("survives a backend terminated between two queries of a transaction: the next query rejects, the process goes on, the pool serves again", async () => {
    const pool = createPool({ connectionString: db.url, max: 2 });
    const store = new PostgresEventStore(pool);
    let terminated!: () => void;
    const between = new Promise<void>((resolve) => (terminated = resolve));
    const failed = store.transaction(async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // The server's FATAL arrives while no query runs on this connection: an `error` event. The
      // wait is for the socket's end (a listener there does not handle the client's error).
      const closed = new Promise((resolve) => (client as unknown as { connection: EventEmitter }).connection.once('end', resolve));
      await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await closed;
      terminated();
      await client.query('SELECT 1');
    });
    await between;
    await expect(failed).rejects.toThrow();
    await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    await pool.end();
  });
});
