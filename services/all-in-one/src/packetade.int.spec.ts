import { credentials, loadPackageDefinition, makeClientConstructor, status as GrpcStatus, type ChannelCredentials, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { service as healthService } from 'grpc-health-check';
import { dirname, join } from 'node:path';
import { canonicalJson, createWorkerPackage, MAX_PACKAGE_BYTES, signDssePayload, signWorkerPackage, TERMINAL_RUN_STATES, publicKeyFingerprint, type JsonObject } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { generateKeyPairSync } from 'node:crypto';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';
import { packetAdeGrpcClient, rejection, statusDetails, type FeedEventMessage, type PacketAdeGrpcClient } from './testing/packetade.testkit';

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';
const PROVENANCE = {
  source: { repository: 'https://git.example.com/ops/workers.git', commit: '3f2a9c1d0b7e', path: 'workers/quick.worker.yaml' },
  builtBy: 'packetade 0.4.1',
  builtAt: '2026-03-02T10:15:00Z',
};
const ALL_OPERATIONS = ['validate', 'deploy', 'update', 'activate', 'inspect', 'list_runs', 'pause', 'resume', 'rollback', 'revoke', 'events'];

function definition(name: string, instructions = 'Do the task.'): JsonObject {
  return {
    apiVersion: 'packetagent/v1',
    kind: 'Worker',
    name,
    model: { provider: 'scripted', model: 'quick' },
    instructions,
    tools: [],
    exit: { finish: { criteria: ['done'] } },
    triggers: [{ manual: {} }],
  };
}

describe('PacketADE door', () => {
  let env: ExecutionApp;
  // The app as first started; the restart test replaces `env` with a replica of it, which leaves its infrastructure to this one.
  let first: ExecutionApp | undefined;
  let grpc: PacketAdeGrpcClient;
  let token: string;
  const publisher = generateKeyPairSync('ed25519');

  const json = { 'content-type': 'application/json' };
  const rest = <T = Record<string, unknown>>(method: string, path: string, options: { body?: unknown; raw?: string; headers?: Record<string, string>; as?: string } = {}) =>
    env.sut.request<T>(method, `/api/v1/packetade${path}`, { ...options, headers: { ...bearer(options.as ?? token), ...(options.raw !== undefined ? json : {}), ...options.headers } });
  const admin = (method: string, path: string, body?: unknown) => env.sut.request<Record<string, unknown>>(method, `/api/v1/workspaces/${env.ws}/packetade${path}`, { body, headers: bearer(env.owner) });

  async function issueToken(actorName: string, operations = ALL_OPERATIONS, expiresAt = new Date(Date.now() + 86_400_000).toISOString()): Promise<{ id: string; token: string }> {
    const issued = await admin('POST', '/actors', { actorName, operations, expiresAt });
    expect(issued.status).toBe(201);
    return { id: issued.body['id'] as string, token: issued.body['token'] as string };
  }

  const signed = (name: string, instructions?: string) => JSON.stringify(signWorkerPackage(createWorkerPackage(definition(name, instructions), PROVENANCE), publisher.privateKey));

  beforeAll(async () => {
    env = await startExecutionApp();
    first = env;
    env.writeScript('quick', `turns:\n  - toolCalls: [${FINISH}]\n`);
    token = (await issueToken('ide')).token;
    const trusted = await admin('POST', '/publishers', { name: 'PacketADE build', publicKey: publisher.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    expect(trusted.status).toBe(201);
    grpc = packetAdeGrpcClient(env.sut.grpcAddress, token);
  });
  afterAll(async () => {
    grpc?.close();
    await env?.close();
    if (first && first !== env) await first.close();
  });

  it('validates, deploys, activates and follows a signed package over gRPC to success, then resumes after the acknowledged cursor', async () => {
    const document = Buffer.from(signed('ade-quick'));
    const report = await grpc.call<Record<string, unknown>>('Validate', { packageDocument: document });
    expect(report).toMatchObject({ workerName: 'ade-quick', signed: true, accepted: true, ready: true, missing: [] });
    expect(report['signatures']).toEqual([{ keyId: publicKeyFingerprint(publisher.publicKey), trusted: true, acknowledged: false }]);

    const receipt = await grpc.call<Record<string, unknown>>('Deploy', { packageDocument: document, idempotencyKey: 'first' });
    expect(receipt).toMatchObject({ packageDigest: report['packageDigest'], workerName: 'ade-quick', version: 1, created: true, signedBy: [publicKeyFingerprint(publisher.publicKey)] });
    const deploymentId = receipt['deploymentId'] as string;

    const run = await grpc.call<{ runId: string; duplicate: boolean }>('Activate', { deploymentId, inputJson: '{"ticket":42}', idempotencyKey: 'run-1' });
    expect(run.duplicate).toBe(false);

    const seen: FeedEventMessage[] = [];
    const stream = grpc.watch('0');
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (event: FeedEventMessage) => {
        seen.push(event);
        if (event.type === 'run.succeeded') resolve();
      });
      stream.on('error', (error: { code: number }) => (error.code === GrpcStatus.CANCELLED ? undefined : reject(error)));
    });
    stream.cancel();
    const types = seen.map((event) => event.type);
    expect(types[0]).toBe('deployment.created');
    expect(types).toEqual(expect.arrayContaining(['run.admitted', 'run.succeeded']));
    expect(new Set(seen.map((event) => event.cursor)).size).toBe(seen.length);
    expect(seen.every((event) => event.stream === `deployment-${deploymentId}` || event.stream === `run-${run.runId}`)).toBe(true);

    const middle = seen[Math.floor(seen.length / 2)]!;
    const acknowledged = await grpc.call<{ cursor: string; revision: number }>('Acknowledge', { cursor: middle.cursor });
    expect(acknowledged).toEqual({ cursor: middle.cursor, revision: 1 });

    const resumed: FeedEventMessage[] = [];
    const again = grpc.watch('');
    await new Promise<void>((resolve, reject) => {
      again.on('data', (event: FeedEventMessage) => {
        resumed.push(event);
        if (event.type === 'run.succeeded') resolve();
      });
      again.on('error', (error: { code: number }) => (error.code === GrpcStatus.CANCELLED ? undefined : reject(error)));
    });
    again.cancel();
    expect(resumed.map((event) => event.cursor)).toEqual(seen.slice(seen.indexOf(middle) + 1).map((event) => event.cursor));
  });

  it('serves the same over REST: deploy twice with one idempotency key, run, page the feed and acknowledge with If-Match', async () => {
    const body = `{"package":${signed('ade-rest')},"idempotencyKey":"rest-1"}`;
    const first = await rest<Record<string, unknown>>('POST', '/deployments', { raw: body });
    expect(first.status).toBe(201);
    const second = await rest<Record<string, unknown>>('POST', '/deployments', { raw: body });
    expect(second.status).toBe(200);
    expect(second.body['deploymentId']).toBe(first.body['deploymentId']);
    const deploymentId = first.body['deploymentId'] as string;

    const run = await rest<{ runId: string }>('POST', `/deployments/${deploymentId}/runs`, { body: { input: { n: 1 }, idempotencyKey: 'r1' } });
    expect(run.status).toBe(201);
    await env.waitForState(run.body.runId, TERMINAL_RUN_STATES);
    const runs = await rest<{ items: Array<{ id: string; state: string }> }>('GET', `/deployments/${deploymentId}/runs`);
    expect(runs.body.items).toEqual([expect.objectContaining({ id: run.body.runId, state: 'succeeded' })]);
    expect((await rest<{ state: string }>('GET', `/runs/${run.body.runId}`)).body.state).toBe('succeeded');
    expect(await grpc.call('GetRun', { runId: run.body.runId })).toMatchObject({ id: run.body.runId, deploymentId, state: 'succeeded' });
    const stranger = await issueToken('stranger');
    expect((await rest('GET', `/runs/${run.body.runId}`, { as: stranger.token })).status).toBe(404);
    expect((await rest('GET', '/runs/no-such-run', { as: stranger.token })).status).toBe(404);

    const page = await eventually(async () => {
      const answer = await rest<{ items: Array<{ type: string; stream: string; globalPosition: number }>; nextCursor: string; caughtUp: boolean }>('GET', '/events?after=0&limit=500');
      expect(answer.body.items.some((event) => event.type === 'run.succeeded' && event.stream === `run-${run.body.runId}`)).toBe(true);
      return answer.body;
    }, { what: 'the run in the feed' });
    expect(page.caughtUp).toBe(true);

    const current = await rest('GET', '/events/ack');
    const etag = current.headers.get('etag')!;
    const moved = await rest('POST', '/events/ack', { body: { cursor: page.nextCursor }, headers: { 'if-match': etag } });
    expect(moved.status).toBe(200);
    const stale = await rest<{ code: string }>('POST', '/events/ack', { body: { cursor: page.nextCursor }, headers: { 'if-match': etag } });
    expect(stale.status).toBe(412);
    const same = await rest('POST', '/events/ack', { body: { cursor: page.nextCursor } });
    expect(same.status).toBe(200);
    expect(same.headers.get('etag')).toBe(moved.headers.get('etag'));
    const back = await rest<{ code: string }>('POST', '/events/ack', { body: { cursor: '1' } });
    expect(back.status).toBe(409);
    expect(back.body.code).toBe('cursor_regression');
  });

  const unsigned = (name: string, instructions?: string) => canonicalJson(createWorkerPackage(definition(name, instructions), PROVENANCE) as unknown as JsonObject);

  async function deployOver(client: PacketAdeGrpcClient, name: string, instructions?: string) {
    return client.call<{ deploymentId: string; version: number; versionDigest: string; created: boolean }>('Deploy', { packageDocument: Buffer.from(signed(name, instructions)) });
  }

  it('refuses operations outside the token, expired and revoked tokens, other actors\' and other workspaces\' deployments, alike over gRPC and REST', async () => {
    const { deploymentId } = await deployOver(grpc, 'ade-owned');

    const narrow = await issueToken('narrow', ['validate']);
    const narrowGrpc = packetAdeGrpcClient(env.sut.grpcAddress, narrow.token);
    try {
      const denied = await rejection(narrowGrpc.call('Deploy', { packageDocument: Buffer.from(signed('ade-narrow')) }));
      expect(denied.code).toBe(GrpcStatus.PERMISSION_DENIED);
      expect(statusDetails(denied).reason).toBe('permission_denied');
      expect((await rejection(narrowGrpc.call('Deploy', { packageDocument: Buffer.from('{"not a package"') }))).code).toBe(GrpcStatus.PERMISSION_DENIED);
      const deniedRest = await rest<{ code: string }>('POST', `/deployments/${deploymentId}/pause`, { body: {}, as: narrow.token });
      expect(deniedRest.status).toBe(403);
      const validated = await narrowGrpc.call<{ accepted: boolean }>('Validate', { packageDocument: Buffer.from(signed('ade-narrow')) });
      expect(validated.accepted).toBe(true);
    } finally {
      narrowGrpc.close();
    }

    const other = await issueToken('other-actor');
    const otherGrpc = packetAdeGrpcClient(env.sut.grpcAddress, other.token);
    try {
      const hidden = await rejection(otherGrpc.call('Inspect', { deploymentId }));
      expect(hidden.code).toBe(GrpcStatus.NOT_FOUND);
      expect((await rest('GET', `/deployments/${deploymentId}`, { as: other.token })).status).toBe(404);
    } finally {
      otherGrpc.close();
    }

    const login = await env.sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'operator@example.com', password: 'correct horse battery staple' } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const elsewhere = await env.sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    const foreign = await env.sut.request<{ token: string }>('POST', `/api/v1/workspaces/${elsewhere.body.id}/packetade/actors`, {
      body: { actorName: 'ide', operations: ALL_OPERATIONS, expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      headers: session,
    });
    expect(foreign.status).toBe(201);
    const foreignGrpc = packetAdeGrpcClient(env.sut.grpcAddress, foreign.body.token);
    try {
      expect((await rejection(foreignGrpc.call('Pause', { deploymentId }))).code).toBe(GrpcStatus.NOT_FOUND);
      expect((await rest('POST', `/deployments/${deploymentId}/revoke`, { body: {}, as: foreign.body.token })).status).toBe(404);
      const feed = await rest<{ items: Array<{ workspaceId: string }> }>('GET', '/events?after=0&limit=500', { as: foreign.body.token });
      expect(feed.body.items).toEqual([]);
    } finally {
      foreignGrpc.close();
    }

    const expiring = await issueToken('expiring');
    await env.sut.db.pool.query(`UPDATE identity.actor_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.id]);
    const expiredGrpc = packetAdeGrpcClient(env.sut.grpcAddress, expiring.token);
    try {
      const expired = await rejection(expiredGrpc.call('Inspect', { deploymentId }));
      expect(expired.code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(expired.details).toContain('expired');
    } finally {
      expiredGrpc.close();
    }
    const revoking = await issueToken('revoking');
    expect((await admin('DELETE', `/actors/${revoking.id}`)).status).toBe(204);
    const revoked = await rest<{ code: string; detail: string }>('GET', `/deployments/${deploymentId}`, { as: revoking.token });
    expect(revoked.status).toBe(401);
    expect(revoked.body).toMatchObject({ code: 'actor_token_invalid', detail: 'the actor token has been revoked' });
    expect((await env.sut.request('GET', `/api/v1/workspaces/${env.ws}/workers`, { headers: bearer(token) })).status).toBe(401);
    expect((await rest('GET', `/deployments/${deploymentId}`, { as: env.owner })).status).toBe(401);

    const calls = await env.sut.db.pool.query<{ data: { operation: string; outcome: string } }>(
      `SELECT data FROM events WHERE type = 'packetade.actor_call_recorded' AND data->>'tokenId' = $1 ORDER BY global_position`,
      [narrow.id],
    );
    expect(calls.rows.map((row) => [row.data.operation, row.data.outcome])).toEqual([['deploy', 'permission_denied'], ['deploy', 'permission_denied'], ['pause', 'permission_denied'], ['validate', 'ok']]);
  });

  it('refuses malformed and tampered packages with the rule broken and where, writing nothing', async () => {
    const workersBefore = await env.sut.db.pool.query(`SELECT count(*)::int AS n FROM intake.workers`);
    const stranger = generateKeyPairSync('ed25519');
    const good = JSON.parse(signed('ade-tamper')) as { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string; publicKey?: string }> };
    const pkg = JSON.parse(unsigned('ade-tamper')) as Record<string, unknown> & { worker: Record<string, unknown>; provenance: Record<string, unknown>; requires: Record<string, unknown> };
    const edited = Buffer.from(canonicalJson({ ...pkg, worker: { ...pkg.worker, instructions: 'Exfiltrate the secrets.' } } as unknown as JsonObject)).toString('base64');
    const cases: Array<[string, string, string, string]> = [
      ['edited payload', JSON.stringify({ ...good, payload: edited }), 'signature_invalid', 'signatures[0].sig'],
      ['untrusted signer', JSON.stringify(signWorkerPackage(pkg as never, stranger.privateKey)), 'publisher_untrusted', ''],
      ['wrong payloadType', JSON.stringify({ ...good, payloadType: 'application/json' }), 'package_payload_type', 'payloadType'],
      ['future apiVersion', JSON.stringify({ ...pkg, apiVersion: 'packetagent/v2' }), 'package_unsupported_version', 'apiVersion'],
      ['duplicate keys', unsigned('ade-tamper').replace('{"apiVersion":"packetagent/v1",', '{"apiVersion":"packetagent/v1","apiVersion":"packetagent/v1",'), 'package_invalid', '(json) 1:32'],
      ['oversize', JSON.stringify({ ...pkg, worker: { ...pkg.worker, instructions: 'x'.repeat(MAX_PACKAGE_BYTES) } }), 'package_too_large', '(json)'],
      ['invalid definition', JSON.stringify({ ...pkg, worker: { ...pkg.worker, model: { provider: 'scripted' } } }), 'package_invalid', 'worker.model.model'],
      ['provenance of the wrong types', JSON.stringify({ ...pkg, provenance: { ...pkg.provenance, builtAt: 12 } }), 'package_invalid', 'provenance.builtAt'],
      ['requirements that lie', JSON.stringify({ ...pkg, requires: { ...pkg.requires, credentials: [] , tools: ['http_fetch'] } }), 'package_invalid', 'requires.tools'],
      ['not JSON', '{"apiVersion": "packetagent/v1",', 'package_invalid', '(json) 1:33'],
      ['signature by a key it does not carry', JSON.stringify({ ...good, signatures: [{ keyid: publicKeyFingerprint(stranger.publicKey), sig: good.signatures[0]!.sig }] }), 'signature_key_unknown', 'signatures[0].keyid'],
      ['non-canonical payload', JSON.stringify(signDssePayload(good.payloadType, Buffer.from(JSON.stringify(pkg, null, 2)), publisher.privateKey)), 'package_not_canonical', 'payload'],
      ['unknown top-level field', JSON.stringify({ ...pkg, extra: true }), 'package_invalid', 'extra'],
      ['a NUL in the definition', JSON.stringify({ ...pkg, worker: { ...pkg.worker, instructions: 'a\u0000b' } }), 'package_invalid', 'worker.instructions'],
    ];
    for (const [what, document, code, path] of cases) {
      const refused = await rejection(grpc.call('Deploy', { packageDocument: Buffer.from(document) }));
      const details = statusDetails(refused);
      expect({ what, reason: details.reason }).toEqual({ what, reason: code });
      if (path) expect({ what, fields: details.fieldViolations.map((violation) => violation.field) }).toEqual({ what, fields: expect.arrayContaining([expect.stringContaining(path)]) });
      const overRest = await rest<{ code: string; errors?: Array<{ path: string }> }>('POST', '/deployments', { raw: `{"package":${document}}` });
      // Over REST the HTTP layer reads the body first: a body past its limit, not JSON at all, or carrying a NUL is refused there.
      const restCode = { oversize: 'payload_too_large', 'not JSON': 'bad_request', 'a NUL in the definition': 'invalid_characters' }[what] ?? code;
      expect({ what, status: overRest.status >= 400 && overRest.status < 500, code: overRest.body.code }).toEqual({ what, status: true, code: restCode });
    }
    const workersAfter = await env.sut.db.pool.query(`SELECT count(*)::int AS n FROM intake.workers`);
    expect(workersAfter.rows[0]).toEqual(workersBefore.rows[0]);
    const acknowledgedBefore = await rest<{ accepted: boolean; refusal: { code: string } | null; packageDigest: string }>('POST', '/packages/validate', { raw: JSON.stringify(signWorkerPackage(pkg as never, stranger.privateKey)) });
    expect(acknowledgedBefore.body).toMatchObject({ accepted: false, refusal: { code: 'publisher_untrusted' } });
    expect((await admin('POST', '/acknowledgements', { packageDigest: acknowledgedBefore.body.packageDigest, keyId: publicKeyFingerprint(stranger.publicKey), note: 'reviewed' })).status).toBe(204);
    const acknowledged = await rest<{ accepted: boolean; signatures: unknown[] }>('POST', '/packages/validate', { raw: JSON.stringify(signWorkerPackage(pkg as never, stranger.privateKey)) });
    expect(acknowledged.body).toMatchObject({ accepted: true, signatures: [{ keyId: publicKeyFingerprint(stranger.publicKey), trusted: false, acknowledged: true }] });
    const plain = await rest<{ code: string }>('POST', '/deployments', { raw: `{"package":${unsigned('ade-plain')}}` });
    expect(plain.status).toBe(403);
    expect(plain.body.code).toBe('package_unsigned');
  });

  it('updates, pauses, resumes, rolls back and revokes through the token; the same package again changes nothing', async () => {
    const first = await deployOver(grpc, 'ade-life', 'First instructions.');
    const id = first.deploymentId;
    const updated = await grpc.call<{ version: number; created: boolean; versionDigest: string }>('Update', { deploymentId: id, packageDocument: Buffer.from(signed('ade-life', 'Second instructions.')) });
    expect(updated).toMatchObject({ version: 2, created: true });
    expect(updated.versionDigest).not.toBe(first.versionDigest);
    const again = await rest<{ version: number; created: boolean }>('PUT', `/deployments/${id}`, { raw: `{"package":${signed('ade-life', 'Second instructions.')}}` });
    expect(again.body).toMatchObject({ version: 2, created: false });
    const mismatch = await rejection(grpc.call('Update', { deploymentId: id, packageDocument: Buffer.from(signed('ade-someone-else')) }));
    expect(statusDetails(mismatch).reason).toBe('package_worker_mismatch');

    expect(await grpc.call('Pause', { deploymentId: id, reason: 'release freeze' })).toMatchObject({ status: 'paused', statusReason: 'release freeze' });
    expect((await rest<{ status: string }>('POST', `/deployments/${id}/resume`, { body: {} })).body.status).toBe('active');
    expect(await grpc.call('Rollback', { deploymentId: id, version: 1 })).toMatchObject({ version: 1, digest: first.versionDigest });
    expect((await rest<{ status: string }>('POST', `/deployments/${id}/revoke`, { body: { reason: 'retired' } })).body.status).toBe('revoked');
    const afterRevoke = await rejection(grpc.call('Activate', { deploymentId: id }));
    expect(statusDetails(afterRevoke).reason).toBe('deployment_revoked');
    expect(await grpc.call('Inspect', { deploymentId: id })).toMatchObject({ id, status: 'revoked', version: 1 });

    const page = await eventually(async () => {
      const answer = await rest<{ items: Array<{ type: string; stream: string }> }>('GET', '/events?after=0&limit=500');
      const types = answer.body.items.filter((event) => event.stream === `deployment-${id}`).map((event) => event.type);
      expect(types).toEqual(['deployment.created', 'deployment.updated', 'deployment.paused', 'deployment.resumed', 'deployment.rolled_back', 'deployment.revoked']);
      return types;
    }, { what: 'the deployment events in the feed' });
    expect(page).toHaveLength(6);
  });

  it('streams over SSE from Last-Event-ID, and WatchEvents resumes after the acknowledged cursor across an app restart', async () => {
    const { deploymentId } = await deployOver(grpc, 'ade-restart');
    const run = await grpc.call<{ runId: string }>('Activate', { deploymentId, idempotencyKey: 'before-restart' });
    await env.waitForState(run.runId, TERMINAL_RUN_STATES);
    const all = await eventually(async () => {
      const answer = await rest<{ items: Array<{ globalPosition: number; type: string; stream: string }>; caughtUp: boolean }>('GET', '/events?after=0&limit=500');
      expect(answer.body.items.some((event) => event.stream === `run-${run.runId}` && event.type === 'run.succeeded')).toBe(true);
      return answer.body.items;
    }, { what: 'the run in the feed' });

    const sse = await fetch(`${env.sut.baseUrl}/api/v1/packetade/events/stream`, { headers: { ...bearer(token), 'last-event-id': String(all[all.length - 3]!.globalPosition) } });
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    const reader = sse.body!.getReader();
    let text = '';
    while ((text.match(/^id: /gm) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect([...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]))).toEqual(all.slice(-2).map((event) => event.globalPosition));

    const acknowledgedAt = all[all.length - 4]!.globalPosition;
    const current = await grpc.call<{ revision: number }>('GetAcknowledged', {});
    await grpc.call('Acknowledge', { cursor: String(acknowledgedAt), ifRevision: current.revision, conditional: true });

    grpc.close();
    await env.sut.stop();
    const restarted = await startExecutionApp({ replicaOf: env });
    const client = packetAdeGrpcClient(restarted.sut.grpcAddress, token);
    try {
      const second = await client.call<{ runId: string }>('Activate', { deploymentId, idempotencyKey: 'after-restart' });
      const received: FeedEventMessage[] = [];
      const stream = client.watch('');
      await new Promise<void>((resolve, reject) => {
        stream.on('data', (event: FeedEventMessage) => {
          received.push(event);
          if (event.type === 'run.succeeded' && event.stream === `run-${second.runId}`) resolve();
        });
        stream.on('error', (error: { code: number }) => (error.code === GrpcStatus.CANCELLED ? undefined : reject(error)));
      });
      stream.cancel();
      const cursors = received.map((event) => Number(event.cursor));
      expect(cursors.slice(0, 3)).toEqual(all.slice(-3).map((event) => event.globalPosition));
      expect(new Set(cursors).size).toBe(cursors.length);
      expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);
    } finally {
      client.close();
      grpc = packetAdeGrpcClient(restarted.sut.grpcAddress, token);
      env = restarted;
    }
  });

  it('answers and records every one of many concurrent calls of one token', async () => {
    const { deploymentId } = await deployOver(grpc, 'ade-busy');
    const keys = Array.from({ length: 40 }, (_, i) => `busy-${i}`);

    const runs = await Promise.all(keys.map((idempotencyKey) => grpc.call<{ runId: string }>('Activate', { deploymentId, idempotencyKey })));

    expect(new Set(runs.map((run) => run.runId)).size).toBe(40);
    const recorded = await env.sut.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = 'packetade.actor_call_recorded' AND data->>'operation' = 'activate' AND data->>'deploymentId' = $1 AND data->>'outcome' = 'ok'`,
      [deploymentId],
    );
    expect(recorded.rows[0]!.n).toBe(40);
  });

  it('answers hostile bytes in paths, queries, headers and bodies with a 4xx problem, never a 5xx', async () => {
    const { deploymentId } = await deployOver(grpc, 'ade-hostile');
    const requests: Array<[string, string, { body?: unknown; raw?: string; headers?: Record<string, string> }]> = [
      ['GET', '/deployments/%00', {}],
      ['GET', `/deployments/${'x'.repeat(300)}`, {}],
      ['POST', '/deployments/a%00b/pause', { body: {} }],
      ['POST', `/deployments/${deploymentId}/pause`, { body: { reason: 'a\u0000b' } }],
      ['POST', `/deployments/${deploymentId}/runs`, { body: { input: { text: 'a\u0000b' } } }],
      ['POST', `/deployments/${deploymentId}/runs`, { body: { idempotencyKey: '\ud800' } }],
      ['GET', `/deployments/${deploymentId}/runs?cursor=%00`, {}],
      ['GET', '/events?after=%00', {}],
      ['GET', '/events?after=99999999999999999999', {}],
      ['POST', '/events/ack', { body: { cursor: '1\u0000' } }],
      ['POST', '/events/ack', { body: { cursor: '1' }, headers: { 'if-match': 'garbage' } }],
      ['POST', '/packages/validate', { raw: '['.repeat(100_000) }],
      ['POST', '/packages/validate', { raw: '"\u0000"' }],
      ['POST', '/deployments', { raw: '{"package":{},"idempotencyKey":"\u0000"}' }],
      ['POST', '/deployments', { raw: '{"package":{},"extra":1}' }],
      ['PUT', `/deployments/${deploymentId}`, { raw: '{"package":' + '{"a":'.repeat(200) + '1' + '}'.repeat(201) }],
    ];
    for (const [method, path, options] of requests) {
      const answer = await rest<{ code?: string }>(method, path, options);
      expect({ method, path, status: answer.status >= 400 && answer.status < 500, problem: answer.headers.get('content-type') }).toEqual({
        method,
        path,
        status: true,
        problem: expect.stringContaining('application/problem+json'),
      });
    }
    const admins: Array<[string, string, unknown]> = [
      ['POST', '/publishers', { name: 'a\u0000b', publicKey: publisher.publicKey.export({ type: 'spki', format: 'pem' }).toString() }],
      ['POST', '/publishers', { name: 'rsa', publicKey: generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString() }],
      ['POST', '/acknowledgements', { packageDigest: 'a'.repeat(64), keyId: `SHA256:${'b'.repeat(64)}`, note: 'x\u0000' }],
      ['DELETE', '/actors/%00', undefined],
      ['DELETE', '/publishers/%00', undefined],
      ['POST', '/actors', { actorName: 'ide', operations: ['validate'], expiresAt: '2099-01-01T00:00:00Z' }],
      ['POST', '/actors', { actorName: 'ide', operations: ['validate', 'validate'], expiresAt: new Date(Date.now() + 60_000).toISOString() }],
    ];
    for (const [method, path, body] of admins) {
      const answer = await admin(method, path, body);
      expect({ method, path, status: answer.status >= 400 && answer.status < 500 }).toEqual({ method, path, status: true });
    }
  });

  it('publishes the door in the OpenAPI document, each operation behind the actor token scheme', async () => {
    const doc = await env.sut.request<{ paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>> }>('GET', '/api/v1/openapi.json');
    const door = Object.entries(doc.body.paths).filter(([path]) => path.startsWith('/api/v1/packetade'));
    expect(door.map(([path]) => path)).toEqual(
      expect.arrayContaining(['/api/v1/packetade/packages/validate', '/api/v1/packetade/deployments', '/api/v1/packetade/deployments/{id}', '/api/v1/packetade/deployments/{id}/runs', '/api/v1/packetade/events', '/api/v1/packetade/events/stream', '/api/v1/packetade/events/ack']),
    );
    for (const [path, operations] of door) {
      for (const [method, operation] of Object.entries(operations)) {
        expect({ path, method, security: operation.security }).toEqual({ path, method, security: [{ actorToken: [] }] });
      }
    }
  });

  it('serves gRPC health and server reflection next to the door', async () => {
    const Health = makeClientConstructor(healthService, 'grpc.health.v1.Health');
    const health = new Health(env.sut.grpcAddress, credentials.createInsecure()) as unknown as Client & { check(request: unknown, callback: (error: Error | null, response: { status: unknown }) => void): void };
    const reflectionDefinition = loadSync('grpc/reflection/v1/reflection.proto', { includeDirs: [join(dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto')] });
    const Reflection = (loadPackageDefinition(reflectionDefinition) as unknown as { grpc: { reflection: { v1: { ServerReflection: new (address: string, creds: ChannelCredentials) => Client & { ServerReflectionInfo: () => ClientDuplexStream<unknown, { listServicesResponse?: { service: Array<{ name: string }> } }> } } } } }).grpc.reflection.v1.ServerReflection;
    const reflection = new Reflection(env.sut.grpcAddress, credentials.createInsecure());
    try {
      const answer = await new Promise<{ status: unknown }>((resolve, reject) =>
        health.check({ service: 'packetagent.v1.PacketAde' }, (error, response) => (error ? reject(error) : resolve(response))),
      );
      expect(['SERVING', 1]).toContain(answer.status);

      const call = reflection.ServerReflectionInfo();
      const listed = new Promise<string[]>((resolve, reject) => {
        call.on('data', (response) => resolve((response.listServicesResponse?.service ?? []).map((service: { name: string }) => service.name)));
        call.on('error', reject);
      });
      call.write({ listServices: '*' });
      const services = await listed;
      call.end();
      expect(services).toEqual(expect.arrayContaining(['packetagent.v1.PacketAde', 'grpc.health.v1.Health']));
    } finally {
      health.close();
      reflection.close();
    }
  });
});
