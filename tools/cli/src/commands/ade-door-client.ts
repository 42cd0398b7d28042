import { z } from 'zod';
import { ApiClient } from '../api-client';
import type { DocumentSource } from '../documents';
import { ApiError, CliError, type ExitCodeValue, UsageError } from '../errors';

/** Exit codes of the door commands beyond the CLI's own (0 ok, 1 failure, 2 connection, 3 auth). */
export const AdeExitCode = {
  /** validate: the workspace does not accept the package's signer (untrusted, unsigned, not acknowledged). */
  refused: 4,
  /** validate: accepted, but the preflight found something missing (a credential, provider, tool or computer). */
  notReady: 5,
  /** watch --until-terminal: the run ended in a terminal state other than succeeded. */
  runNotSucceeded: 6,
} as const;

/** An outcome a script branches on, with its own exit code; the message goes to stderr like any error. */
export class AdeOutcome extends CliError {
  constructor(message: string, code: number) {
    // Beyond ExitCode's values on purpose: see AdeExitCode, and 128+n for a signal.
    super(message, code as ExitCodeValue);
  }
}

const ACTOR_TOKEN_PREFIX = 'pade_';
export const ADE_TOKEN_VARIABLE = 'PACKETAGENT_ADE_TOKEN';

/** The actor token from --token, else the environment; refuses none, and an API key given in its place. */
export function actorTokenOf(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const token = flag || env[ADE_TOKEN_VARIABLE];
  if (!token) throw new UsageError(`no PacketADE actor token: set ${ADE_TOKEN_VARIABLE} (or pass --token); \`packetagent ade actor issue\` makes one`);
  if (!token.startsWith(ACTOR_TOKEN_PREFIX)) {
    throw new UsageError(`the PacketADE door takes an actor token ("pade_<id>_<secret>", from \`packetagent ade actor issue\`), not an API key (--token or ${ADE_TOKEN_VARIABLE})`);
  }
  return token;
}

const Signature = z.looseObject({ keyId: z.string(), trusted: z.boolean(), acknowledged: z.boolean() });
const Requirements = z.looseObject({ providers: z.array(z.string()), tools: z.array(z.string()), credentials: z.array(z.string()) });
export const ValidationReportSchema = z.looseObject({
  packageDigest: z.string(),
  workerName: z.string(),
  signed: z.boolean(),
  signatures: z.array(Signature),
  accepted: z.boolean(),
  refusal: z.looseObject({ code: z.string(), detail: z.string() }).nullable(),
  requires: Requirements,
  preflight: z.looseObject({ ready: z.boolean(), missing: z.array(z.looseObject({ kind: z.string(), name: z.string(), reason: z.string() })) }),
});
export type ValidationReport = z.infer<typeof ValidationReportSchema>;

const Webhook = z.looseObject({ triggerId: z.string(), secret: z.string() });
export const DeployReceiptSchema = z.looseObject({
  packageDigest: z.string(),
  workerId: z.string(),
  workerName: z.string(),
  version: z.number(),
  versionDigest: z.string(),
  deploymentId: z.string(),
  created: z.boolean(),
  signedBy: z.array(z.string()),
  webhooks: z.array(Webhook),
});
export type DeployReceipt = z.infer<typeof DeployReceiptSchema>;

export const RunStartedSchema = z.looseObject({ runId: z.string().min(1), deploymentId: z.string(), state: z.string(), hold: z.string().nullable(), duplicate: z.boolean() });
export type RunStarted = z.infer<typeof RunStartedSchema>;

export const DeploymentViewSchema = z.looseObject({
  id: z.string(),
  workerId: z.string(),
  workerName: z.string(),
  version: z.number(),
  digest: z.string(),
  status: z.string(),
  statusReason: z.string().nullable(),
  maxConcurrentRuns: z.number(),
  activeRuns: z.number(),
  heldRuns: z.number(),
  /** Present on control answers: a rollback that makes a trigger again shows its secret once. */
  webhooks: z.array(Webhook).optional(),
});
export type DeploymentView = z.infer<typeof DeploymentViewSchema>;

export const RunPageSchema = z.looseObject({
  items: z.array(z.looseObject({ id: z.string(), state: z.string(), version: z.number(), hold: z.string().nullable(), createdAt: z.string() })),
  nextCursor: z.string().nullable(),
});

export const RunViewSchema = z.looseObject({ id: z.string(), deploymentId: z.string(), state: z.string() });

/** The fields of an event envelope the CLI reads; the rest is printed as received with --json. */
export const FeedEventSchema = z.looseObject({ type: z.string(), stream: z.string(), globalPosition: z.number(), occurredAt: z.string() });
export type FeedEvent = z.infer<typeof FeedEventSchema>;

export const AcknowledgedSchema = z.looseObject({ cursor: z.string(), revision: z.number() });

export const FeedPageSchema = z.looseObject({ items: z.array(z.looseObject({ globalPosition: z.number() })), nextCursor: z.string(), caughtUp: z.boolean() });

/**
 * The PacketADE door (/api/v1/packetade) with an actor token. A refusal's message leads with the
 * problem's code (publisher_untrusted, package_not_canonical, ...), the word a person or script
 * looks up, rather than the HTTP status title.
 */
export class AdeDoor {
  readonly client: ApiClient;

  constructor(options: { apiUrl: string; token: string }) {
    this.client = new ApiClient({ apiUrl: options.apiUrl, apiKey: options.token, credential: { name: 'actor token', source: `--token or ${ADE_TOKEN_VARIABLE}` } });
  }

  path(...segments: string[]): string {
    return ['api/v1/packetade', ...segments.map(encodeURIComponent)].join('/');
  }

  validate(document: Uint8Array): Promise<ValidationReport> {
    return coded(this.client.post(this.path('packages', 'validate'), { bytes: document, contentType: 'application/json' }, ValidationReportSchema));
  }

  deploy(document: Uint8Array, idempotencyKey: string | undefined): Promise<DeployReceipt> {
    return coded(this.client.post(this.path('deployments'), { bytes: packageRequest(document, idempotencyKey), contentType: 'application/json' }, DeployReceiptSchema));
  }

  update(deploymentId: string, document: Uint8Array): Promise<DeployReceipt> {
    return coded(this.client.put(this.path('deployments', deploymentId), { bytes: packageRequest(document, undefined), contentType: 'application/json' }, DeployReceiptSchema));
  }

  activate(deploymentId: string, body: { input?: unknown; idempotencyKey?: string }): Promise<RunStarted> {
    return coded(this.client.post(this.path('deployments', deploymentId, 'runs'), { json: body }, RunStartedSchema));
  }

  inspect(deploymentId: string): Promise<DeploymentView> {
    return coded(this.client.get(this.path('deployments', deploymentId), DeploymentViewSchema));
  }

  runs(deploymentId: string, query: { cursor?: string; limit: number }): Promise<z.infer<typeof RunPageSchema>> {
    return coded(this.client.get(this.path('deployments', deploymentId, 'runs'), RunPageSchema, { cursor: query.cursor, limit: String(query.limit) }));
  }

  run(runId: string): Promise<z.infer<typeof RunViewSchema>> {
    return coded(this.client.get(this.path('runs', runId), RunViewSchema));
  }

  control(deploymentId: string, action: 'pause' | 'resume' | 'revoke' | 'rollback', body: { reason?: string; version?: number }): Promise<DeploymentView> {
    return coded(this.client.post(this.path('deployments', deploymentId, action), { json: body }, DeploymentViewSchema));
  }

  /** One page of the feed after `after` (else after the acknowledged cursor), events as received. */
  events(query: { after?: string; limit: number }): Promise<z.infer<typeof FeedPageSchema>> {
    return coded(this.client.get(this.path('events'), FeedPageSchema, { after: query.after, limit: String(query.limit) }));
  }

  acknowledged(): Promise<z.infer<typeof AcknowledgedSchema>> {
    return coded(this.client.get(this.path('events', 'ack'), AcknowledgedSchema));
  }

  acknowledge(cursor: string): Promise<z.infer<typeof AcknowledgedSchema>> {
    return coded(this.client.post(this.path('events', 'ack'), { json: { cursor } }, AcknowledgedSchema));
  }

  /** The feed as SSE, after `lastEventId` (or `after`, or else the acknowledged cursor). */
  stream(options: { lastEventId?: string; after?: string; signal: AbortSignal }): Promise<ReadableStream<Uint8Array>> {
    return coded(
      this.client.openStream(this.path('events', 'stream'), {
        signal: options.signal,
        headers: options.lastEventId !== undefined ? { 'last-event-id': options.lastEventId } : {},
        query: { after: options.lastEventId === undefined ? options.after : undefined },
      }),
    );
  }
}

/**
 * `{"package":<the file's JSON text, verbatim>,"idempotencyKey":...}`: the server sees the very
 * bytes the file holds (a signed envelope or a canonical package is judged on them). A leading
 * byte order mark is not part of the JSON text and would break the body around it.
 */
export function packageRequest(document: Uint8Array, idempotencyKey: string | undefined): Buffer {
  const bom = document[0] === 0xef && document[1] === 0xbb && document[2] === 0xbf;
  const tail = idempotencyKey === undefined ? '}' : `,"idempotencyKey":${JSON.stringify(idempotencyKey)}}`;
  return Buffer.concat([Buffer.from('{"package":'), bom ? document.subarray(3) : document, Buffer.from(tail)]);
}

async function coded<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ApiError && error.code) {
      const detail = error.problem?.['detail'];
      throw new ApiError(error.status, `${error.code}: ${typeof detail === 'string' && detail ? detail : error.message}`, error.issues, error.problem);
    }
    throw error;
  }
}

/** What every door command gets: the door, files, and output that honours --json. */
export interface AdeDoorContext {
  door: AdeDoor;
  documents: DocumentSource;
  report(lines: string[], machine: unknown): void;
}
