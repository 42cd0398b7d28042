import { jetstreamManager } from '@nats-io/jetstream';
import { BUS_TOPOLOGY, CommandBus, NATS_CONNECTION } from '@packetagent/bus';
import { MigrationCommands, TERMINAL_RUN_STATES, runControlStreamId, runStreamId, verifyEvidenceBundle } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { RecordingServer, startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

const OWNER_ACTOR = { kind: 'user', id: 'operator' } as const;

function worker(name: string, instructions: string, tools: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: ${instructions}
tools: ${tools}
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';

/** The run engine's guarantees across its parts: one writer per run stream, migration by shadow replay, wakes that change nothing. */
describe('run engine', () => {
  let env: ExecutionApp;
  let far: RecordingServer;

  beforeAll(async () => {
    far = await new RecordingServer().start();
    env = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`] });
  });
  afterAll(async () => {
    await env?.close();
    await far?.close();
  });
  beforeEach(() => {
    far.requests.length = 0;
    far.hold = null;
  });

  const openAttention = (app: ExecutionApp, runId: string) =>
    eventually(async () => {
      const list = await app.sut.request<{ items: Array<{ id: string; runId: string }> }>('GET', `/api/v1/workspaces/${app.ws}/attention?state=open`, { headers: bearer(app.owner) });
      return list.body.items.find((item) => item.runId === runId);
    }, { what: 'the open attention' });
  const approve = async (app: ExecutionApp, runId: string, scope: 'once' | 'run' = 'once') => {
    const open = await openAttention(app, runId);
    expect((await app.sut.request('POST', `/api/v1/workspaces/${app.ws}/attention/${open.id}/approve`, { body: { scope }, headers: bearer(app.owner) })).status).toBe(200);
  };
  const control = async (runId: string, action: 'stop' | 'pause' | 'resume') => {
    expect((await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/runs/${runId}/${action}`, { body: {}, headers: bearer(env.owner) })).status).toBe(200);
  };
  const actors = async (app: ExecutionApp, stream: string) => {
    const { rows } = await app.sut.db.pool.query<{ type: string; actor: { kind: string; id: string } }>(
      `SELECT type, metadata->'actor' AS actor FROM events WHERE stream_id = $1 ORDER BY stream_version`,
      [stream],
    );
    return rows;
  };
  const deployedWorker = async (deploymentId: string) =>
    (await env.sut.request<{ workerId: string }>('GET', `/api/v1/workspaces/${env.ws}/deployments/${deploymentId}`, { headers: bearer(env.owner) })).body.workerId;
  const newVersion = async (workerId: string, yaml: string) => {
    const created = await env.sut.request<{ version: number }>('POST', `/api/v1/workspaces/${env.ws}/workers/${workerId}/versions`, { raw: yaml, headers: { ...bearer(env.owner), 'content-type': 'application/yaml' } });
    expect(created.status).toBe(201);
    return created.body.version;
  };
  const rollTo = async (deploymentId: string, version: number) => {
    expect((await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/deployments/${deploymentId}/rollback`, { body: { version }, headers: bearer(env.owner) })).status).toBe(200);
  };
  const migrate = (runId: string, version: number, dryRun: boolean) =>
    env.sut.app.get(CommandBus).request(MigrationCommands.migrateRun, { workspaceId: env.ws, runId, version, dryRun, actor: OWNER_ACTOR });

  it('keeps one writer per run stream: after run.claimed every event is the supervisor\'s, through approval, pause, resume, stop and revoke', async () => {
    const page = `{ name: http_fetch, arguments: { url: "${far.origin}/page" } }`;
    const tools = `[{ tool: http_fetch, verbs: [GET], resources: ["${far.origin}/*"], approval: never }, { tool: ask_owner }]`;
    env.writeScript('owned', `turns:\n  - toolCalls: [{ name: ask_owner, arguments: { question: "Go?" } }]\n  - toolCalls: [${page}]\n  - toolCalls: [${page}]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('owned', 'Do the task.', tools));

    const approved = await env.startRun(deploymentId);
    await env.waitForState(approved, ['waiting']);
    far.hold = (request) => request.url === '/page';
    await approve(env, approved);
    await eventually(() => far.requests.some((request) => request.url === '/page'), { what: 'the read to be in flight' });
    await control(approved, 'pause');
    far.hold = null;
    await eventually(async () => (await env.events(approved)).some((event) => event.type === 'run.waiting' && event.data['reason'] === 'paused'), { what: 'the run to park' });
    await control(approved, 'resume');
    expect(await env.waitForState(approved, TERMINAL_RUN_STATES)).toBe('succeeded');

    const stopped = await env.startRun(deploymentId);
    await env.waitForState(stopped, ['waiting']);
    await control(stopped, 'stop');
    expect(await env.waitForState(stopped, TERMINAL_RUN_STATES)).toBe('cancelled');

    const revoked = await env.startRun(deploymentId);
    await env.waitForState(revoked, ['waiting']);
    expect((await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/deployments/${deploymentId}/revoke`, { body: { reason: 'retired' }, headers: bearer(env.owner) })).status).toBe(200);
    expect(await env.waitForState(revoked, TERMINAL_RUN_STATES)).toBe('revoked');

    for (const runId of [approved, stopped, revoked]) {
      const events = await actors(env, runStreamId(runId));
      const claimedAt = events.findIndex((event) => event.type === 'run.claimed');
      expect(claimedAt).toBeGreaterThan(0);
      // Before the claim only intake's admission, on behalf of whoever started the run.
      expect(events.slice(0, claimedAt).map((event) => event.type)).toEqual(['run.admitted']);
      expect(events.slice(claimedAt).filter((event) => event.actor.id !== 'supervisor')).toEqual([]);
      // The requests themselves are intake's, in the run's control stream, each folded once into the run.
      const requests = await actors(env, runControlStreamId(runId));
      const folded = events.filter((event) => event.type.endsWith('_requested'));
      expect(folded.map((event) => event.type)).toEqual(requests.map((request) => request.type));
    }
    const types = (await env.events(approved)).map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['run.pause_requested', 'run.resume_requested', 'run.resumed', 'run.succeeded']));
    expect((await env.events(revoked)).at(-1)).toMatchObject({ type: 'run.revoked', data: { reason: 'retired' } });
  });

  it('moves a waiting run to a version whose instructions differ only in wording, and the run completes on it', async () => {
    const post = `{ name: http_fetch, arguments: { url: "${far.origin}/x", method: POST, body: "y" } }`;
    const tools = `[{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]`;
    env.writeScript('movable', `turns:\n  - toolCalls: [${post}]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('movable', 'Do the task.', tools));
    const runId = await env.startRun(deploymentId);
    await env.waitForState(runId, ['waiting']);

    const version = await newVersion(await deployedWorker(deploymentId), worker('movable', 'Carry out the task, carefully.', tools));
    await expect(migrate(runId, version, false)).rejects.toMatchObject({ code: 'version_not_deployed', message: expect.stringMatching(/pins version 1/) });
    await rollTo(deploymentId, version);

    const dry = await migrate(runId, version, true);
    expect(dry).toMatchObject({ outcome: 'would_migrate', from: { version: 1 }, to: { version }, divergence: null });
    expect(dry.decisionsCompared).toBeGreaterThan(3);
    expect((await env.events(runId)).at(-1)?.type).toBe('run.waiting');

    const moved = await migrate(runId, version, false);
    expect(moved).toMatchObject({ outcome: 'migrated', decisionsCompared: dry.decisionsCompared });
    expect((await env.events(runId)).at(-1)).toMatchObject({ type: 'run.migrated', data: { from: { version: 1 }, to: { version }, by: OWNER_ACTOR } });

    await approve(env, runId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    expect(far.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });

  it('refuses to move a run to a version that no longer grants a tool the run used, naming the first divergent event', async () => {
    const page = `{ name: http_fetch, arguments: { url: "${far.origin}/page" } }`;
    env.writeScript('pinned', `turns:\n  - toolCalls: [${page}]\n  - toolCalls: [{ name: ask_owner, arguments: { question: "Ship it?" } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('pinned', 'Do the task.', `[{ tool: http_fetch, verbs: [GET], resources: ["${far.origin}/*"], approval: never }, { tool: ask_owner }]`));
    const runId = await env.startRun(deploymentId);
    await env.waitForState(runId, ['waiting']);
    const version = await newVersion(await deployedWorker(deploymentId), worker('pinned', 'Do the task.', '[{ tool: ask_owner }]'));
    await rollTo(deploymentId, version);

    const refused = await migrate(runId, version, false);
    const decided = (await env.events(runId)).find((event) => event.type === 'run.tool_decided');
    expect(refused).toMatchObject({
      outcome: 'refused',
      divergence: { streamVersion: decided!.version, eventType: 'run.tool_decided', recorded: expect.stringContaining('http_fetch granted'), proposed: expect.stringContaining('http_fetch not granted') },
    });
    expect((await env.events(runId)).map((event) => event.type)).not.toContain('run.migrated');
    await approve(env, runId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
  });

  it('refuses to move a run that is not waiting', async () => {
    env.writeScript('quick', `turns:\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('quick', 'Do the task.', '[]'));
    const runId = await env.startRun(deploymentId);
    await env.waitForState(runId, TERMINAL_RUN_STATES);
    await expect(migrate(runId, 1, true)).rejects.toMatchObject({ code: 'run_not_waiting' });
  });

  it('records a model turn of 6 MB (0.9 MB of text, a 5 MB tool argument) by reference: the run succeeds, its events stay small and read back whole, audit verify passes, and a tampered payload is reported with its digest', async () => {
    const text = 'thinking '.repeat(100_000);
    const body = 'b'.repeat(5 * 1024 * 1024);
    env.writeScript('bulky', `contextWindow: 4000000\nturns:\n  - text: ${JSON.stringify(text)}\n    toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/upload", method: POST, body: "${body}" } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('bulky', 'Do the task.', `[{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: never }]`));
    const runId = await env.startRun(deploymentId);
    const ended = await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000);
    expect({ ended, last: ended === 'succeeded' ? null : (await env.events(runId)).at(-1) }).toEqual({ ended: 'succeeded', last: null });
    // The tool takes bodies up to 1 MiB: the call is answered with a correction, and the run goes on to finish.
    const result = (await env.events(runId)).find((event) => event.type === 'run.tool_result');
    expect(result?.data).toMatchObject({ ok: false, executed: false, summary: 'invalid arguments: correction sent' });
    expect(far.requests.filter((request) => request.url === '/upload')).toEqual([]);

    const { rows } = await env.sut.db.pool.query<{ type: string; bytes: number }>(`SELECT type, octet_length(data::text) AS bytes FROM events WHERE stream_id = $1`, [runStreamId(runId)]);
    expect(Math.max(...rows.map((row) => row.bytes))).toBeLessThan(64 * 1024);
    const page = await env.sut.request<{ items: Array<{ type: string; data: { text?: string; toolCalls?: Array<{ arguments: { body: string } }> } }> }>('GET', `/api/v1/workspaces/${env.ws}/runs/${runId}/events`, { headers: bearer(env.owner) });
    const turn = page.body.items.find((item) => item.type === 'run.model_turn');
    expect(turn?.data.text).toBe(text);
    expect(turn?.data.toolCalls?.[0]?.arguments.body.length).toBe(body.length);

    const verified = await env.sut.request<{ ok: boolean }>('GET', `/api/v1/workspaces/${env.ws}/audit/verify`, { headers: bearer(env.owner) });
    expect(verified.body.ok).toBe(true);
    const bundle = await env.sut.request('GET', `/api/v1/workspaces/${env.ws}/runs/${runId}/evidence`, { headers: bearer(env.owner) });
    expect(verifyEvidenceBundle(bundle.body)).toMatchObject({ ok: true });
    const digest = (await env.sut.db.pool.query<{ digest: string }>(`SELECT data->'text'->'$payload'->>'digest' AS digest FROM events WHERE stream_id = $1 AND type = 'run.model_turn'`, [runStreamId(runId)])).rows[0]!.digest;
    await env.sut.db.pool.query(`ALTER TABLE eventstore.payloads DISABLE TRIGGER USER`);
    await env.sut.db.pool.query(`UPDATE eventstore.payloads SET content = overlay(content placing convert_to('"T', 'UTF8') from 1 for 2) WHERE digest = $1`, [digest]);
    await env.sut.db.pool.query(`ALTER TABLE eventstore.payloads ENABLE TRIGGER USER`);
    const tampered = await env.sut.request<{ ok: boolean; breaks: Array<Record<string, unknown>> }>('GET', `/api/v1/workspaces/${env.ws}/audit/verify`, { headers: bearer(env.owner) });
    expect(tampered.body.ok).toBe(false);
    expect(JSON.stringify(tampered.body.breaks)).toContain(digest);
  });

  it('keeps a waiting run waiting when JetStream lost every message and the relay republished them: no claim, no event, and it finishes when approved', async () => {
    const post = `{ name: http_fetch, arguments: { url: "${far.origin}/x", method: POST, body: "y" } }`;
    const app = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`] });
    let restarted: ExecutionApp | null = null;
    try {
      app.writeScript('survivor', `turns:\n  - toolCalls: [${post}]\n  - toolCalls: [${FINISH}]\n`);
      const deploymentId = await app.deploy(worker('survivor', 'Do the task.', `[{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]`));
      const runId = await app.startRun(deploymentId);
      await app.waitForState(runId, ['waiting']);
      const before = await app.events(runId);
      await app.sut.stop();

      restarted = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`], replicaOf: app, freshBus: true });
      const republished = await eventually(async () => {
        const { rows } = await restarted!.sut.db.pool.query<{ count: string }>(`SELECT count(*) FROM events`);
        const info = await jetStreamCount(restarted!);
        return info >= Number(rows[0]!.count) && info;
      }, { what: 'the relay to republish every event into the empty stream' });
      expect(republished).toBeGreaterThan(before.length);
      // The supervisor's consumers saw run.admitted again; the run still reads as it did.
      await eventually(async () => (await consumerPending(restarted!, 'supervisor-runs')) === 0, { what: 'the supervisor to take every republished run event' });
      expect(await restarted.events(runId)).toEqual(before);
      expect(await restarted.runState(runId)).toBe('waiting');

      await approve(restarted, runId);
      expect(await restarted.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
      const after = (await restarted.events(runId)).slice(before.length);
      expect(after.filter((event) => event.type === 'run.claimed')).toHaveLength(1);
      expect(far.requests.filter((request) => request.method === 'POST')).toHaveLength(1);
    } finally {
      await restarted?.close();
      await app.close();
    }
  });
});

async function jetStreamCount(app: ExecutionApp): Promise<number> {
  const jsm = await jetstreamManager(app.sut.app.get(NATS_CONNECTION));
  const info = await jsm.streams.info(app.sut.app.get<{ eventsStream: string }>(BUS_TOPOLOGY).eventsStream);
  return info.state.messages;
}

async function consumerPending(app: ExecutionApp, durable: string): Promise<number> {
  const jsm = await jetstreamManager(app.sut.app.get(NATS_CONNECTION));
  const info = await jsm.consumers.info(app.sut.app.get<{ eventsStream: string }>(BUS_TOPOLOGY).eventsStream, durable);
  return info.num_pending + info.num_ack_pending;
}
