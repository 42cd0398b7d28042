import { completeSetup, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { ConsoleReads } from './console-reads';
import { ConsoleReadsController, SetupStatusController } from './console-reads.controller';

/** Real Postgres (migrated template) and the real gateway over HTTP; read-model rows are inserted as the projector writes them. */
describe(ConsoleReadsController.name, () => {
  let sut: GatewayTestApp;
  let ws: string;
  let ownerKey: string;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    sut = await startGatewayTestApp({ modules: [{ module: class ReadsTestModule {}, controllers: [ConsoleReadsController, SetupStatusController], providers: [ConsoleReads] }] });
  });
  afterAll(async () => {
    await sut.close();
  });

  it('answers setup as incomplete before the owner exists and complete after', async () => {
    expect((await sut.request('GET', '/api/v1/setup/status')).body).toEqual({ complete: false });
    ({ workspaceId: ws, apiKey: ownerKey } = await completeSetup(sut));
    expect((await sut.request('GET', '/api/v1/setup/status')).body).toEqual({ complete: true });
  });

  it('names workers, deployments, members and API keys of the caller’s workspace', async () => {
    const at = '2026-11-30T08:00:00Z';
    await sut.db.pool.query(`INSERT INTO projector.workers (worker_id, workspace_id, name, description, latest_version, created_at, updated_at) VALUES ('wrk1', $1, 'reporter', '', 1, $2, $2), ('wrk9', 'ws_other', 'elsewhere', '', 1, $2, $2)`, [ws, at]);
    await sut.db.pool.query(
      `INSERT INTO projector.deployments (deployment_id, workspace_id, worker_id, worker_name, version, digest, effective_digest, state, max_concurrent_runs, triggers, created_at, updated_at)
       VALUES ('dep1', $1, 'wrk1', 'reporter', 1, 'd', 'd', 'active', 1, '[]', $2, $2)`,
      [ws, at],
    );

    const answer = await sut.request<Record<string, unknown>>('GET', `/api/v1/workspaces/${ws}/directory`, { headers: bearer(ownerKey) });

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      workers: [{ id: 'wrk1', name: 'reporter' }],
      deployments: [{ id: 'dep1', workerId: 'wrk1', workerName: 'reporter', version: 1, state: 'active' }],
      users: [{ id: expect.any(String), email: 'owner@example.com', role: 'owner' }],
      apiKeys: [{ id: expect.any(String), name: 'owner key (setup)' }],
    });
    expect(answer.text).not.toContain(ownerKey);
    expect((await sut.request('GET', '/api/v1/workspaces/ws_other/directory', { headers: bearer(ownerKey) })).status).toBe(404);
    expect((await sut.request('GET', `/api/v1/workspaces/${ws}/directory`)).status).toBe(401);
  });

  it('answers the facts of the runs named, and 400 for too many ids', async () => {
    await sut.db.pool.query(
      `INSERT INTO projector.runs (run_id, workspace_id, deployment_id, worker_id, worker_name, version, source, state, phase, iteration, tool_calls, cost_usd, created_at, started_at, ended_at, updated_at)
       VALUES ('r1', $1, 'dep1', 'wrk1', 'reporter', 1, 'manual', 'succeeded', 'ended', 1, 1, 0.5, '2026-11-30T08:00:00Z', '2026-11-30T08:00:00Z', '2026-11-30T08:01:00Z', '2026-11-30T08:01:00Z')`,
      [ws],
    );

    const answer = await sut.request<{ items: unknown[] }>('GET', `/api/v1/workspaces/${ws}/run-facts?ids=r1,unknown`, { headers: bearer(ownerKey) });

    expect(answer.status).toBe(200);
    expect(answer.body.items).toEqual([expect.objectContaining({ runId: 'r1', workerName: 'reporter', costUsd: 0.5, durationMs: 60_000 })]);
    const many = Array.from({ length: 201 }, (_, i) => `r${i}`).join(',');
    expect((await sut.request('GET', `/api/v1/workspaces/${ws}/run-facts?ids=${many}`, { headers: bearer(ownerKey) })).status).toBe(400);
  });

  it('answers a day of hourly trends by default and two weeks of days when asked', async () => {
    const hourly = await sut.request<{ bucket: string; points: unknown[] }>('GET', `/api/v1/workspaces/${ws}/trends`, { headers: bearer(ownerKey) });
    expect(hourly.status).toBe(200);
    expect(hourly.body.bucket).toBe('hour');
    expect(hourly.body.points).toHaveLength(24);
    const daily = await sut.request<{ bucket: string; points: unknown[] }>('GET', `/api/v1/workspaces/${ws}/trends?bucket=day`, { headers: bearer(ownerKey) });
    expect(daily.body.points).toHaveLength(14);
    expect((await sut.request('GET', `/api/v1/workspaces/${ws}/trends?bucket=week`, { headers: bearer(ownerKey) })).status).toBe(400);
  });
});
