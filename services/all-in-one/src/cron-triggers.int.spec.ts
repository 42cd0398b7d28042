import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SchedulerEngine } from '@packetagent/scheduler';
import { eventually } from '@packetagent/testing';
import { bearer, startTestApp, type TestApp } from './testing/app.testkit';

const EXAMPLE = readFileSync(join(__dirname, '../../../examples/release-audit.worker.yaml'), 'utf8');

/** Cron instants admitted as runs, in order, with how many runs each produced. */
async function admittedTicks(app: TestApp, deploymentId: string): Promise<{ instant: string; runs: number }[]> {
  const { rows } = await app.db.pool.query<{ instant: string; runs: number }>(
    `SELECT data->'activation'->'details'->>'scheduledAt' AS instant, count(*)::int AS runs
       FROM events WHERE type = 'run.admitted' AND data->>'deploymentId' = $1 AND data->'activation'->>'source' = 'cron'
      GROUP BY 1 ORDER BY 1`,
    [deploymentId],
  );
  return rows;
}

describe('cron triggers with two replicas of the whole app', () => {
  let first: TestApp;
  let second: TestApp;
  let deploymentId: string;

  beforeAll(async () => {
    first = await startTestApp();
    second = await startTestApp({}, first);
    const setup = await first.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: first.setupToken, email: 'cron@example.com', password: 'correct horse battery staple', workspace: 'Cron' },
    });
    const ws = setup.body.workspaceId;
    const key = bearer(setup.body.apiKey);
    const worker = await first.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/workers`, { body: { name: 'every-second' }, headers: key });
    const definition = EXAMPLE.replace('name: release-audit', 'name: every-second')
      .replace('bounds: { maxWallSeconds: 600, maxIterations: 20, maxToolCalls: 40 }', 'bounds: { maxWallSeconds: 600, maxIterations: 20, maxToolCalls: 40, maxConcurrentRuns: 1000 }')
      .replace('{ name: weekday-morning, cron: "0 9 * * 1-5", timezone: Europe/Paris }', '{ name: every-second, cron: "* * * * * *", timezone: Europe/Paris }');
    const version = await first.request('POST', `/api/v1/workspaces/${ws}/workers/${worker.body.id}/versions`, {
      raw: definition,
      headers: { ...key, 'content-type': 'application/yaml' },
    });
    expect(version.status).toBe(201);
    const deployment = await second.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/deployments`, { body: { workerId: worker.body.id, acceptMissing: true }, headers: key });
    deploymentId = deployment.body.id;
  });

  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('admits exactly one run per tick, and the other replica keeps ticking when the leader stops', async () => {
    const ticks = await eventually(async () => {
      const admitted = await admittedTicks(first, deploymentId);
      return admitted.length >= 4 && admitted;
    }, { timeoutMs: 15_000, what: 'four cron ticks admitted' });
    expect(ticks.every((tick) => tick.runs === 1)).toBe(true);
    const seconds = ticks.map((tick) => Date.parse(tick.instant) / 1000);
    expect(seconds.every((s) => Number.isInteger(s))).toBe(true);

    const engines = [first, second].map((app) => app.app.get(SchedulerEngine));
    const leaders = engines.filter((engine) => engine.status().isLeader);
    expect(leaders).toHaveLength(1);
    const [leader, follower] = engines[0]!.status().isLeader ? [first, second] : [second, first];

    const stoppedAt = Date.now();
    await leader.stop();

    await eventually(() => follower.app.get(SchedulerEngine).status().isLeader, { timeoutMs: 15_000, what: 'the follower taking the lead' });
    const after = await eventually(async () => {
      const admitted = await admittedTicks(follower, deploymentId);
      const later = admitted.filter((tick) => Date.parse(tick.instant) > stoppedAt + 1_000);
      return later.length >= 2 && admitted;
    }, { timeoutMs: 10_000, what: 'ticks fired by the new leader' });
    expect(after.every((tick) => tick.runs === 1)).toBe(true);
    const { rows } = await follower.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM intake.runs WHERE deployment_id = $1 AND source = 'cron'`,
      [deploymentId],
    );
    const distinct = new Set((await admittedTicks(follower, deploymentId)).map((tick) => tick.instant));
    expect(rows[0]!.n).toBe(distinct.size);
  });
});
