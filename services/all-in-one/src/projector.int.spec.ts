import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { PROJECTIONS } from '@packetagent/projections';
import { eventually, testEnv } from '@packetagent/testing';
import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { bearer } from './testing/app.testkit';
import { RecordingServer, startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

const ROOT = resolve(__dirname, '../../..');
// The sources, not the bin: it prefers a compiled build, which may predate this checkout.
const CLI_MAIN = join(ROOT, 'tools/cli/src/main.ts');
const finish = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';

function worker(name: string, body: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Do the task.
${body}
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

interface Overview {
  asOf: string;
  runs: { queued: number; running: number; waiting: number; succeededToday: number; failedToday: number };
  attention: { open: number };
  spendTodayUsd: number;
  budgets: Array<{ scope: { kind: string; id: string; unit: string; window: string }; limit: number; spent: number; held: number }>;
  health: { status: string; relayLagMs: number; deadLetters: number; projectionLagEvents: number; gaps: number };
}

interface Summary {
  runId: string;
  state: string;
  phase: string | null;
  iteration: number;
  toolCalls: number;
  costUsd: number;
  waitingOn: { reason: string; attentionId: string | null } | null;
  lastCheckpoint: { seq: number; digest: string; at: string } | null;
  outcome: { type: string; reason: string | null; detail: string | null } | null;
  [field: string]: unknown;
}

describe('projector', () => {
  let env: ExecutionApp;
  let far: RecordingServer;
  let viewer: string;
  const runs: Record<string, string> = {};

  beforeAll(async () => {
    far = await new RecordingServer().start();
    env = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`] });
    const key = await env.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${env.ws}/api-keys`, { body: { name: 'viewer', role: 'viewer' }, headers: bearer(env.owner) });
    viewer = key.body.secret;
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await far?.close();
  });

  const overview = async (key = env.owner) => env.sut.request<Overview>('GET', `/api/v1/workspaces/${env.ws}/overview`, { headers: bearer(key) });
  const summary = async (runId: string, key = env.owner) => env.sut.request<Summary>('GET', `/api/v1/workspaces/${env.ws}/runs/${runId}/summary`, { headers: bearer(key) });
  /** The projections have applied every event of the workspace committed so far. */
  const caughtUp = () => eventually(async () => {
    const answer = await overview();
    return answer.status === 200 && answer.body.health.projectionLagEvents === 0 && answer.body;
  }, { what: 'the projections to catch up' });
  const projected = (runId: string, states: string[]) => eventually(async () => {
    const answer = await summary(runId);
    return answer.status === 200 && states.includes(answer.body.state) && answer.body;
  }, { what: `run ${runId} to be projected as ${states.join(' or ')}` });

  it('projects executed runs, one held for approval, into the overview and run summaries', async () => {
    const pricing = 'pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 }\n';
    env.writeScript('plain', `${pricing}turns:\n  - { toolCalls: [${finish}], usage: { inputTokens: 1000, outputTokens: 100 } }\n`);
    env.writeScript('loops', `turns:\n${'  - toolCalls: [{ name: propose_criteria, arguments: { criteria: [x] } }]\n'.repeat(3)}`);
    env.writeScript('guarded', [
      `${pricing}turns:`,
      `  - { toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/post", method: POST, body: "hello" } }], usage: { inputTokens: 2000, outputTokens: 50 } }`,
      `  - { toolCalls: [${finish}], usage: { inputTokens: 2500, outputTokens: 80 } }`,
    ].join('\n'));
    const plain = await env.deploy(worker('plain', 'tools: []'));
    const loops = await env.deploy(worker('loops', 'tools: [{ tool: propose_criteria, approval: never }]\nbounds: { maxIterations: 2 }'));
    const guarded = await env.deploy(worker('guarded', `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]\nbounds: { maxToolCalls: 4 }`));
    runs['plain'] = await env.startRun(plain);
    runs['loops'] = await env.startRun(loops);
    runs['guarded'] = await env.startRun(guarded);

    const waiting = await projected(runs['guarded'], ['waiting']);
    expect(waiting).toMatchObject({ phase: 'waiting', waitingOn: { reason: 'approval', attentionId: expect.any(String) } });
    const whileWaiting = await eventually(async () => {
      const body = (await overview()).body;
      return body.attention.open === 1 && body;
    }, { what: 'the open approval in the overview' });
    expect(whileWaiting.runs.waiting).toBe(1);
    const approved = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/attention/${waiting.waitingOn!.attentionId}/approve`, { body: { scope: 'once' }, headers: bearer(env.owner) });
    expect(approved.status).toBe(200);

    expect(await env.waitForState(runs['plain'], TERMINAL_RUN_STATES)).toBe('succeeded');
    expect(await env.waitForState(runs['loops'], TERMINAL_RUN_STATES)).toBe('failed');
    expect(await env.waitForState(runs['guarded'], TERMINAL_RUN_STATES)).toBe('succeeded');
    const done = await projected(runs['guarded'], ['succeeded']);
    const events = await env.events(runs['guarded']);
    const turns = events.filter((event) => event.type === 'run.model_turn');
    const checkpoints = events.filter((event) => event.type === 'run.checkpoint');
    expect(done).toMatchObject({
      runId: runs['guarded'],
      deploymentId: guarded,
      workerName: 'guarded',
      version: 1,
      state: 'succeeded',
      phase: 'ended',
      iteration: 2,
      toolCalls: 1,
      bounds: expect.objectContaining({ maxToolCalls: 4 }),
      remaining: expect.objectContaining({ toolCalls: 3 }),
      waitingOn: null,
      lastCheckpoint: { seq: checkpoints.length, digest: checkpoints.at(-1)!.data['digest'], at: expect.any(String) },
      outcome: { type: 'run.succeeded', reason: null, detail: 'done' },
      model: { provider: 'scripted', model: 'guarded', scripted: true },
      startedAt: expect.any(String),
      endedAt: expect.any(String),
    });
    expect(done.costUsd).toBeCloseTo(turns.reduce((sum, turn) => sum + (turn.data['costUsd'] as number), 0), 9);
    expect(await projected(runs['loops'], ['failed'])).toMatchObject({ phase: 'ended', outcome: { type: 'run.failed', reason: 'iteration_limit' } });

    const body = await caughtUp();
    expect(body).toMatchObject({
      runs: { queued: 0, running: 0, waiting: 0, succeededToday: 2, failedToday: 1 },
      attention: { open: 0 },
      health: { status: 'ok', deadLetters: 0, gaps: 0, projectionLagEvents: 0 },
    });
    const { rows } = await env.sut.db.pool.query<{ micros: string }>(
      `SELECT coalesce(sum((a->>'amount')::bigint), 0) AS micros FROM events, jsonb_array_elements(data->'actual') a
        WHERE type = 'budget.settled' AND workspace_id = $1 AND a->>'unit' = 'usd'`,
      [env.ws],
    );
    expect(Number(rows[0]!.micros)).toBeGreaterThan(0);
    expect(body.spendTodayUsd).toBeCloseTo(Number(rows[0]!.micros) / 1e6, 6);
  }, 60_000);

  it('lets a viewer read both routes and answers 404 to a caller from another workspace', async () => {
    expect((await overview(viewer)).status).toBe(200);
    expect((await summary(runs['plain']!, viewer))).toMatchObject({ status: 200, body: { state: 'succeeded' } });
    expect((await summary('no-such-run')).status).toBe(404);

    const login = await env.sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'operator@example.com', password: 'correct horse battery staple' } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const other = await env.sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    const outsider = await env.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other.body.id}/api-keys`, { body: { name: 'outsider', role: 'owner' }, headers: session });
    expect((await overview(outsider.body.secret)).status).toBe(404);
    expect((await summary(runs['plain']!, outsider.body.secret)).status).toBe(404);
    const own = await env.sut.request<Summary>('GET', `/api/v1/workspaces/${other.body.id}/runs/${runs['plain']}/summary`, { headers: bearer(outsider.body.secret) });
    expect(own.status).toBe(404);
    const ownOverview = await env.sut.request<Overview>('GET', `/api/v1/workspaces/${other.body.id}/overview`, { headers: bearer(outsider.body.secret) });
    expect(ownOverview).toMatchObject({ status: 200, body: { runs: { succeededToday: 0, failedToday: 0 } } });
  });

  it('reports an event it cannot decode as a gap in the overview and goes on projecting', async () => {
    const pool = env.sut.db.pool;
    const stream = `report-${randomUUID()}`;
    await pool.query(`INSERT INTO streams (stream_id, workspace_id, category) VALUES ($1, $2, 'report')`, [stream, env.ws]);
    await pool.query(
      `INSERT INTO events (event_id, stream_id, stream_version, type, schema_version, workspace_id, occurred_at, data, metadata, digest, prev_digest)
       VALUES ($1, $2, 1, 'report.published', 1, $3, now(), '{"title":"from a newer release"}', $4, $5, NULL)`,
      [randomUUID(), stream, env.ws, JSON.stringify({ causationId: null, correlationId: null, traceparent: null, actor: { kind: 'system', id: 'future' } }), 'c'.repeat(64)],
    );
    const degraded = await eventually(async () => {
      const body = (await overview()).body;
      return body.health.gaps === 1 && body;
    }, { what: 'the gap in the overview' });
    expect(degraded.health).toMatchObject({ status: 'degraded', gaps: 1 });
    const { rows } = await pool.query(`SELECT stream_id, type, code FROM projector.gaps`);
    expect(rows).toEqual([{ stream_id: stream, type: 'report.published', code: 'unknown_event_type' }]);

    env.writeScript('after', `turns:\n  - toolCalls: [${finish}]\n`);
    const runId = await env.startRun(await env.deploy(worker('after', 'tools: []')));
    expect(await projected(runId, ['succeeded'])).toMatchObject({ phase: 'ended' });
  }, 30_000);

  it('rebuilds every projection with `packetagent replay` into the same rows, swapped in while the projector runs', async () => {
    await caughtUp();
    const pool = env.sut.db.pool;
    const tables = PROJECTIONS.flatMap((projection) => projection.tables);
    const snapshot = async () => {
      const out: Record<string, unknown[]> = {};
      for (const table of tables) {
        const columns = table.columns.map((column) => column.name).join(', ');
        out[table.name] = (await pool.query(`SELECT ${columns} FROM projector.${table.name} ORDER BY ${columns}`)).rows;
      }
      return out;
    };
    const positions = async () => (await pool.query(`SELECT projection, position FROM projector.checkpoints ORDER BY projection`)).rows;
    const before = await snapshot();
    const positionsBefore = await positions();
    expect(before['runs']).toHaveLength(4);
    expect(before['attention']).toHaveLength(1);
    expect(before['run_timeline']!.length).toBeGreaterThan(30);

    const outcome = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(
        process.execPath,
        ['-r', '@swc-node/register', CLI_MAIN, 'replay', '--projection', 'all', '--database-url', env.sut.db.url, '--nats-url', testEnv.natsUrl, '--bus-prefix', env.sut.bus.prefix],
        { cwd: ROOT, env: { ...process.env, SWC_NODE_PROJECT: join(ROOT, 'tools/cli/tsconfig.json') }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stdout, stderr }));
    });
    expect(outcome).toMatchObject({ code: 0, stderr: '' });
    expect(outcome.stdout).toMatch(/replaying from JetStream/);
    for (const projection of PROJECTIONS) expect(outcome.stdout).toMatch(new RegExp(`^swapped the rebuilt ${projection.name} in at position \\d+`, 'm'));

    expect(await positions()).toEqual(positionsBefore);
    const after = await snapshot();
    for (const table of tables) expect({ table: table.name, rows: after[table.name] }).toEqual({ table: table.name, rows: before[table.name] });
  }, 120_000);
});
