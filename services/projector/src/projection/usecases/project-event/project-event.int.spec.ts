import { EventRegistry } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { decodeForProjection, registerProjectorEvents } from '@packetagent/projections';
import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { resolveProjectorOptions } from '../../../projector.options';
import { ProjectEvent } from './project-event';

const actor = { kind: 'service', id: 'test' } as const;

describe(ProjectEvent.name, () => {
  let db: TestDatabase;
  const registry = registerProjectorEvents(new EventRegistry());
  const logged: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('reads the events a delivery skipped from the store, then applies the delivery', async () => {
    const store = new PostgresEventStore(db.pool, { registry, doorbellChannel: null });
    await store.append('worker-w1', 'no_stream', [
      { type: 'worker.created', data: { workerId: 'w1', name: 'reporter', description: '' }, actor },
      { type: 'worker.version_created', data: { workerId: 'w1', version: 1, digest: 'a'.repeat(64), definition: {} }, actor },
      { type: 'worker.version_created', data: { workerId: 'w1', version: 2, digest: 'b'.repeat(64), definition: {} }, actor },
    ], { workspaceId: 'ws1' });
    const [first, , third] = (await store.readAll()).map((envelope) => decodeForProjection(registry, () => envelope));
    const sut = new ProjectEvent(db.pool, registry, resolveProjectorOptions({ log: (_level, message) => logged.push(message) }));

    expect(await sut.execute(first!)).toMatchObject({ kind: 'event', caughtUp: 0 });
    expect(await sut.execute(third!)).toMatchObject({ kind: 'event', caughtUp: 1 });

    expect(logged).toEqual(['delivery skipped ahead of the projections; reading the missed events from the store']);
    const { rows } = await db.pool.query(`SELECT version FROM projector.versions ORDER BY version`);
    expect(rows).toEqual([{ version: 1 }, { version: 2 }]);
    expect((await db.pool.query(`SELECT latest_version FROM projector.workers`)).rows).toEqual([{ latest_version: 2 }]);
  });

  it('records an undecodable delivery as a gap', async () => {
    const sut = new ProjectEvent(db.pool, registry, resolveProjectorOptions());
    const gap = decodeForProjection(registry, () => ({ type: 'mystery.happened' }), { globalPosition: 1_000, workspaceId: 'ws1' });
    expect(await sut.execute(gap)).toEqual({ kind: 'gap', outcome: 'recorded' });
    expect((await db.pool.query(`SELECT global_position, code FROM projector.gaps`)).rows).toEqual([{ global_position: '1000', code: 'malformed_envelope' }]);
  });
});
