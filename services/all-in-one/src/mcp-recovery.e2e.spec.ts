import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRunState, isTerminal, runStreamId } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { sharedInfrastructure, startAppProcess, type AppProcess, type SharedInfrastructure } from './testing/app-process.testkit';
import { Tracker } from './testing/mcp-tracker.testkit';

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';

/** A supervisor SIGKILLed while an MCP call is in flight: the receipts decide, as for any tool. */
describe('MCP calls across a supervisor crash', () => {
  let infra: SharedInfrastructure;
  const tracker = new Tracker();
  let scriptsDir: string;
  let ws: string;
  let owner: string;
  const processes: AppProcess[] = [];

  const start = async (name: string) => {
    const app = await startAppProcess(infra, name, { PACKETAGENT_SCRIPTS_DIR: scriptsDir, PACKETAGENT_HTTP_ALLOW_PRIVATE: tracker.host });
    processes.push(app);
    return app;
  };

  beforeAll(async () => {
    infra = await sharedInfrastructure();
    await tracker.start();
    scriptsDir = mkdtempSync(join(tmpdir(), 'pa-scripts-'));
    const first = await start('setup');
    const setup = await first.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: infra.setupToken, email: 'operator@example.com', password: 'correct horse battery staple', workspace: 'MCP recovery' },
    });
    ws = setup.body.workspaceId;
    owner = setup.body.apiKey;
    await first.stop();
  }, 90_000);

  afterAll(async () => {
    await Promise.all(processes.map((app) => app.kill()));
    await tracker.close();
    await infra?.cleanup();
    rmSync(scriptsDir, { recursive: true, force: true });
  });

  it('ends the run abandoned(uncertain_effect) with attention when the supervisor dies mid-call, and the tool is not called again', async () => {
    let release = () => undefined as void;
    tracker.hold = new Promise<void>((resolve) => (release = resolve));
    writeFileSync(join(scriptsDir, 'crash.yaml'), `turns:\n  - toolCalls: [{ name: tracker__create_issue, arguments: { title: "Once only" } }]\n  - toolCalls: [${FINISH}]\n`);
    const a = await start('a-mcp');
    const yaml = `apiVersion: packetagent/v1
kind: Worker
name: crash
model: { provider: scripted, model: crash }
instructions: File the issue.
mcp:
  - { name: tracker, transport: http, url: "${tracker.url}" }
tools: [{ tool: "mcp:tracker/create_issue", approval: never }]
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
    const worker = await a.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/workers`, { body: { name: 'crash' }, headers: bearer(owner) });
    expect((await a.request('POST', `/api/v1/workspaces/${ws}/workers/${worker.body.id}/versions`, { raw: yaml, headers: { ...bearer(owner), 'content-type': 'application/yaml' } })).status).toBe(201);
    const deployment = await a.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/deployments`, { body: { workerId: worker.body.id, acceptMissing: true }, headers: bearer(owner) });
    const runId = (await a.request<{ runId: string }>('POST', `/api/v1/workspaces/${ws}/deployments/${deployment.body.id}/runs`, { body: { input: {} }, headers: bearer(owner) })).body.runId;

    await eventually(() => tracker.calls.includes('create_issue'), { timeoutMs: 30_000, what: 'the call to reach the server' });
    await a.kill();
    release();
    tracker.hold = null;

    const b = await start('b-mcp');
    const state = await eventually(async () => {
      const current = (await b.request<{ state: string }>('GET', `/api/v1/workspaces/${ws}/runs/${runId}`, { headers: bearer(owner) })).body.state;
      return isRunState(current) && isTerminal(current) && current;
    }, { timeoutMs: 60_000, what: 'the run to end' });
    expect(state).toBe('abandoned');
    const events = (await infra.db.pool.query<{ type: string; data: Record<string, unknown> }>('SELECT type, data FROM events WHERE stream_id = $1 ORDER BY stream_version', [runStreamId(runId)])).rows;
    expect(events.find((event) => event.type === 'run.abandoned')?.data).toMatchObject({ cause: 'uncertain_effect', effect: { tool: 'mcp', resource: 'tracker/create_issue' }, attentionId: expect.any(String) });
    expect(tracker.calls.filter((call) => call === 'create_issue')).toHaveLength(1);
    await b.stop();
  }, 120_000);
});
