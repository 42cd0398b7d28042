/**
 * A PacketADE client as PacketADE builds one, for the benchmark: @grpc/grpc-js with the service
 * from the .proto, actor tokens issued by the owner, package deploys and timed activations over
 * gRPC and REST.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { credentials, loadPackageDefinition, Metadata, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { createWorkerPackage, type JsonObject } from '@packetagent/contracts';
import { expectStatus, request, ROOT, type App } from './app-process';
import { now } from './stats';

/** A deployment admits at most this many concurrent runs (the schema's ceiling), and nothing ends a run here. */
export const MAX_CONCURRENT_RUNS = 1_000;
const ALL_OPERATIONS = ['validate', 'deploy', 'update', 'activate', 'inspect', 'list_runs', 'pause', 'resume', 'rollback', 'revoke', 'events'];
const INPUT = { release: '2026.11.3' };
const PROVENANCE = {
  source: { repository: 'https://git.example.com/bench/workers.git', commit: '0123456789ab', path: 'bench.worker.json' },
  builtBy: 'packetagent bench',
  builtAt: '2026-12-01T00:00:00Z',
};

type Unary = (request: unknown, metadata: Metadata, callback: (error: ServiceError | null, response: unknown) => void) => void;

export interface FeedEventMessage {
  cursor: string;
  type: string;
  stream: string;
  occurredAt: string;
}

export interface GrpcDoor {
  call<T>(method: string, request: Record<string, unknown>): Promise<T>;
  watch(cursor: string): ClientReadableStream<FeedEventMessage>;
  close(): void;
}

export async function grpcDoor(address: string, token: string): Promise<GrpcDoor> {
  const definition = loadSync('packetagent/v1/packetade.proto', { includeDirs: [join(ROOT, 'libs/contracts/proto')], longs: Number, enums: String, defaults: true });
  const loaded = loadPackageDefinition(definition) as unknown as { packetagent: { v1: { PacketAde: new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => Client } } };
  const client = new loaded.packetagent.v1.PacketAde(address, credentials.createInsecure()) as Client & Record<string, unknown>;
  await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())));
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return {
    call: <T>(method: string, body: Record<string, unknown>) =>
      new Promise<T>((resolve, reject) => {
        (client[method] as Unary).call(client, body, metadata.clone(), (error, response) => (error ? reject(error) : resolve(response as T)));
      }),
    watch: (cursor) => (client['WatchEvents'] as (request: unknown, metadata: Metadata) => ClientReadableStream<FeedEventMessage>).call(client, { cursor }, metadata.clone()),
    close: () => client.close(),
  };
}

export function workerDefinition(name: string): JsonObject {
  return {
    apiVersion: 'packetagent/v1',
    kind: 'Worker',
    name,
    model: { provider: 'scripted', model: 'bench' },
    instructions: 'Do the task.',
    tools: [],
    bounds: { maxConcurrentRuns: MAX_CONCURRENT_RUNS },
    exit: { finish: { criteria: ['done'] } },
    triggers: [{ manual: {} }],
  };
}

/** An actor token with every operation, issued by the owner. */
export async function issueToken(app: App, actorName: string): Promise<string> {
  const issued = await request<{ token: string }>(`${app.baseUrl}/api/v1/workspaces/${app.setup.workspaceId}/packetade/actors`, 'POST', {
    body: { actorName, operations: ALL_OPERATIONS, expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    headers: { authorization: `Bearer ${app.setup.apiKey}` },
  });
  expectStatus(issued, 201, 'issuing an actor token');
  return issued.body.token;
}

/** `count` deployments of one unsigned package (accepted while the workspace trusts no publisher), over gRPC Deploy. */
export async function deploy(door: GrpcDoor, name: string, count: number): Promise<string[]> {
  const document = Buffer.from(JSON.stringify(createWorkerPackage(workerDefinition(name), PROVENANCE)));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const receipt = await door.call<{ deploymentId: string; created: boolean }>('Deploy', { packageDocument: document, idempotencyKey: `${name}-${i}` });
    if (!receipt.created) throw new Error(`deploy ${name}-${i} answered an existing deployment`);
    ids.push(receipt.deploymentId);
  }
  if (new Set(ids).size !== ids.length) throw new Error('two deploys answered the same deployment');
  return ids;
}

const key = (tag: string) => `${tag}-${randomBytes(8).toString('hex')}`;

/** gRPC Activate to its answer; intake answers after the transaction holding run.admitted committed. */
export async function activateGrpc(door: GrpcDoor, deploymentId: string, tag: string): Promise<{ ms: number; runId: string; at: number }> {
  const t0 = now();
  const answer = await door.call<{ runId: string; hold: string; duplicate: boolean }>('Activate', { deploymentId, inputJson: JSON.stringify(INPUT), idempotencyKey: key(tag) });
  const at = now();
  // A held run would mean the benchmark measured deferral, not admission.
  if (answer.hold !== '' || answer.duplicate) throw new Error(`gRPC activation was ${answer.duplicate ? 'a duplicate' : `held (${answer.hold})`}`);
  return { ms: at - t0, runId: answer.runId, at };
}

/** A REST POST runs (`url`) to the parsed 201, Node's global fetch with keep-alive. */
export async function activateRest(url: string, bearer: string, tag: string): Promise<{ ms: number; runId: string; at: number }> {
  const t0 = now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input: INPUT, idempotencyKey: key(tag) }),
  });
  const body = (await response.json()) as { runId?: string; hold?: string | null; code?: string };
  const at = now();
  const ms = at - t0;
  if (response.status !== 201 || !body.runId) throw new Error(`REST activation answered ${response.status} ${body.code ?? ''}, expected 201`);
  if (body.hold !== null) throw new Error(`REST activation was held (${String(body.hold)})`);
  return { ms, runId: body.runId, at };
}
