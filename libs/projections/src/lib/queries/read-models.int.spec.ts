import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { PROJECTOR_SCHEMA } from '../applier';
import { DEPLOYMENTS_TABLE } from '../projections/deployments.projection';
import { RUNS_TABLE } from '../projections/runs.projection';
import { RUN_TIMELINE_TABLE } from '../projections/run-timeline.projection';
import { WORKERS_TABLE } from '../projections/workers.projection';
import { qualified, toDatabase, type Row, type TableSpec } from '../table';
import { readRunFacts } from './run-facts';
import { readRunTrends } from './run-trends';
import { readWorkspaceNames } from './workspace-names';

/** Real Postgres (the migrated projector schema); rows are written as the projections write them. */
async function insert(db: TestDatabase, table: TableSpec, row: Row): Promise<void> {
  const columns = table.columns.filter((column) => column.name in row);
  const values = columns.map((column) => toDatabase(column, row[column.name]));
  await db.pool.query(
    `INSERT INTO ${qualified(PROJECTOR_SCHEMA, table.name)} (${columns.map((c) => c.name).join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
}

function runRow(runId: string, changes: Row): Row {
  return {
    run_id: runId,
    workspace_id: 'ws1',
    deployment_id: 'dep1',
    worker_id: 'wrk1',
    worker_name: 'reporter',
    version: 2,
    source: 'manual',
    state: 'queued',
    iteration: 0,
    tool_calls: 0,
    cost_usd: 0,
    created_at: '2026-11-30T08:00:00.000Z',
    updated_at: '2026-11-30T08:00:00.000Z',
    ...changes,
  };
}

let position = 0;
function turn(runId: string, at: string, costUsd: number): Row {
  position += 1;
  return { global_position: position, workspace_id: 'ws1', run_id: runId, stream_version: position, type: 'run.model_turn', occurred_at: at, summary: { iteration: 1, costUsd } };
}

describe('console read models', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await db.drop();
  });

  describe(readRunFacts.name, () => {
    it('answers worker, cost and duration of the named runs of the workspace only, in the order asked', async () => {
      await insert(db, RUNS_TABLE, runRow('r1', { state: 'succeeded', phase: 'ended', cost_usd: 0.25, started_at: '2026-11-30T08:00:01.000Z', ended_at: '2026-11-30T08:00:31.500Z' }));
      await insert(db, RUNS_TABLE, runRow('r2', { worker_name: 'triage', worker_id: 'wrk2', state: 'queued' }));
      await insert(db, RUNS_TABLE, runRow('r3', { workspace_id: 'ws2' }));

      const sut = await readRunFacts(db.pool, 'ws1', ['r2', 'r1', 'r3', 'missing']);

      expect(sut.map((facts) => facts.runId)).toEqual(['r2', 'r1']);
      expect(sut[1]).toEqual({
        runId: 'r1',
        workerId: 'wrk1',
        workerName: 'reporter',
        deploymentId: 'dep1',
        version: 2,
        costUsd: 0.25,
        startedAt: '2026-11-30T08:00:01.000Z',
        endedAt: '2026-11-30T08:00:31.500Z',
        durationMs: 30_500,
      });
      // Not started, not ended: measured from creation to now.
      expect(sut[0]).toMatchObject({ workerName: 'triage', startedAt: null, endedAt: null });
      expect(sut[0]!.durationMs).toBeGreaterThan(0);
    });

    it('answers nothing when no run is named', async () => {
      await expect(readRunFacts(db.pool, 'ws1', [])).resolves.toEqual([]);
    });
  });

  describe(readRunTrends.name, () => {
    it('counts runs started, succeeded and failed and sums model spend per hour, with empty hours as zero', async () => {
      await insert(db, RUNS_TABLE, runRow('r1', { created_at: '2026-11-30T08:05:00Z', state: 'succeeded', phase: 'ended', ended_at: '2026-11-30T09:10:00Z' }));
      await insert(db, RUNS_TABLE, runRow('r2', { created_at: '2026-11-30T08:30:00Z', state: 'failed', phase: 'ended', ended_at: '2026-11-30T08:40:00Z' }));
      await insert(db, RUNS_TABLE, runRow('r3', { created_at: '2026-11-30T10:15:00Z', state: 'running', phase: 'plan' }));
      await insert(db, RUNS_TABLE, runRow('other', { workspace_id: 'ws2', created_at: '2026-11-30T08:05:00Z' }));
      await insert(db, RUN_TIMELINE_TABLE, turn('r1', '2026-11-30T08:06:00Z', 0.25));
      await insert(db, RUN_TIMELINE_TABLE, turn('r2', '2026-11-30T08:31:00Z', 0.5));
      await insert(db, RUN_TIMELINE_TABLE, turn('r3', '2026-11-30T10:16:00Z', 1));
      await insert(db, RUN_TIMELINE_TABLE, turn('other', '2026-11-30T08:06:00Z', 9));

      const sut = await readRunTrends(db.pool, 'ws1', 'hour', { buckets: 4, now: new Date('2026-11-30T10:20:00Z') });

      expect(sut).toEqual({
        bucket: 'hour',
        points: [
          { start: '2026-11-30T07:00:00.000Z', started: 0, succeeded: 0, failed: 0, spendUsd: 0 },
          { start: '2026-11-30T08:00:00.000Z', started: 2, succeeded: 0, failed: 1, spendUsd: 0.75 },
          { start: '2026-11-30T09:00:00.000Z', started: 0, succeeded: 1, failed: 0, spendUsd: 0 },
          { start: '2026-11-30T10:00:00.000Z', started: 1, succeeded: 0, failed: 0, spendUsd: 1 },
        ],
      });
    });

    it('buckets by UTC day and leaves out what happened before the window', async () => {
      await insert(db, RUNS_TABLE, runRow('old', { created_at: '2026-11-20T08:00:00Z', state: 'succeeded', phase: 'ended', ended_at: '2026-11-20T08:01:00Z' }));
      await insert(db, RUNS_TABLE, runRow('r1', { created_at: '2026-11-29T23:59:00Z', state: 'succeeded', phase: 'ended', ended_at: '2026-11-30T00:01:00Z' }));

      const sut = await readRunTrends(db.pool, 'ws1', 'day', { buckets: 2, now: new Date('2026-11-30T12:00:00Z') });

      expect(sut.points).toEqual([
        { start: '2026-11-29T00:00:00.000Z', started: 1, succeeded: 0, failed: 0, spendUsd: 0 },
        { start: '2026-11-30T00:00:00.000Z', started: 0, succeeded: 1, failed: 0, spendUsd: 0 },
      ]);
    });
  });

  describe(readWorkspaceNames.name, () => {
    it('names the workspace’s workers and deployments and nothing of another workspace', async () => {
      const at = '2026-11-30T08:00:00Z';
      await insert(db, WORKERS_TABLE, { worker_id: 'wrk1', workspace_id: 'ws1', name: 'reporter', description: '', latest_version: 2, created_at: at, updated_at: at });
      await insert(db, WORKERS_TABLE, { worker_id: 'wrk9', workspace_id: 'ws2', name: 'elsewhere', description: '', latest_version: 1, created_at: at, updated_at: at });
      await insert(db, DEPLOYMENTS_TABLE, {
        deployment_id: 'dep1',
        workspace_id: 'ws1',
        worker_id: 'wrk1',
        worker_name: 'reporter',
        version: 2,
        digest: 'a',
        effective_digest: 'a',
        state: 'active',
        max_concurrent_runs: 1,
        triggers: [],
        created_at: at,
        updated_at: at,
      });

      const sut = await readWorkspaceNames(db.pool, 'ws1');

      expect(sut).toEqual({
        workers: [{ id: 'wrk1', name: 'reporter' }],
        deployments: [{ id: 'dep1', workerId: 'wrk1', workerName: 'reporter', version: 2, state: 'active' }],
      });
    });
  });
});
