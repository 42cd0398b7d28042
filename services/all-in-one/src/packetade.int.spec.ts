import { status as GrpcStatus } from '@grpc/grpc-js';
import { canonicalJson, createWorkerPackage, signWorkerPackage, TERMINAL_RUN_STATES, publicKeyFingerprint, type JsonObject } from '@packetagent/contracts';
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
    env.writeScript('quick', `turns:\n  - toolCalls: [${FINISH}]\n`);
    token = (await issueToken('ide')).token;
    const trusted = await admin('POST', '/publishers', { name: 'PacketADE build', publicKey: publisher.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    expect(trusted.status).toBe(201);
    grpc = packetAdeGrpcClient(env.sut.grpcAddress, token);
  });
  afterAll(async () => {
    grpc?.close();
    await env?.close();
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
});
