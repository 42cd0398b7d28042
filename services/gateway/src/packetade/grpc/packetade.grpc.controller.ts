import { Controller, UseFilters, UseGuards } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import type { Metadata, ServerWritableStream } from '@grpc/grpc-js';
import { Observable } from 'rxjs';
import { randomUUID } from 'node:crypto';
import { DomainError, jsonIssues, readPackageDocument, ValidationError, type JsonValue } from '@packetagent/contracts';
import { toProblem } from '../../http/problem';
import { ActorCalls } from '../door/actor-calls';
import { PacketAdeDoor, type DeploymentAction } from '../door/packetade-door';
import { FeedAcknowledgements } from '../feed/acknowledgements';
import { ActorFeed } from '../feed/actor-feed';
import { formatFeedCursor, parseFeedCursor } from '../feed/feed-cursor';
import type { FeedSink } from '../feed/feed-session';
import { ActorTokenGrpcGuard } from './actor-token.grpc-guard';
import { callActor } from './call-actor';
import { GrpcProblemFilter, grpcErrorOf } from './grpc-errors';
import { deploymentMessage, feedEventMessage, runMessage } from './grpc-messages';
import { PACKETADE_SERVICE } from './grpc-health';

type Call = object;
const SERVICE = PACKETADE_SERVICE.split('.').pop()!;

/**
 * The PacketADE door over gRPC (packetagent.v1.PacketAde in libs/contracts/proto): the same
 * operations as REST through PacketAdeDoor. ActorTokenGrpcGuard authenticates the actor token in
 * the call's `authorization` metadata; GrpcProblemFilter turns every refusal into a status.
 */
@Controller()
@UseFilters(GrpcProblemFilter)
@UseGuards(ActorTokenGrpcGuard)
export class PacketAdeGrpcController {
  constructor(
    private readonly door: PacketAdeDoor,
    private readonly calls: ActorCalls,
    private readonly feed: ActorFeed,
    private readonly acknowledgements: FeedAcknowledgements,
  ) {}

  @GrpcMethod(SERVICE, 'Validate')
  async validate(request: { packageDocument: Buffer }, _metadata: Metadata, call: Call) {
    const report = await this.door.validate(callActor(call), 'grpc', () => readPackageDocument(request.packageDocument));
    return {
      packageDigest: report.packageDigest,
      workerName: report.workerName,
      signed: report.signed,
      signatures: report.signatures,
      accepted: report.accepted,
      refusalCode: report.refusal?.code ?? '',
      refusalDetail: report.refusal?.detail ?? '',
      requires: report.requires,
      ready: report.preflight.ready,
      missing: report.preflight.missing,
    };
  }

  @GrpcMethod(SERVICE, 'Deploy')
  deploy(request: { packageDocument: Buffer; idempotencyKey: string }, _metadata: Metadata, call: Call) {
    return this.door.deploy(callActor(call), 'grpc', () => ({ document: readPackageDocument(request.packageDocument), idempotencyKey: textField(request.idempotencyKey, 'idempotency_key', 200) }));
  }

  @GrpcMethod(SERVICE, 'Update')
  update(request: { deploymentId: string; packageDocument: Buffer }, _metadata: Metadata, call: Call) {
    return this.door.update(callActor(call), 'grpc', request.deploymentId, () => readPackageDocument(request.packageDocument));
  }

  @GrpcMethod(SERVICE, 'Activate')
  async activate(request: { deploymentId: string; inputJson: string; idempotencyKey: string }, _metadata: Metadata, call: Call) {
    const key = textField(request.idempotencyKey, 'idempotency_key', 200) ?? randomUUID();
    const result = await this.door.activate(callActor(call), 'grpc', request.deploymentId, inputOf(request.inputJson), key);
    return { ...result, hold: result.hold ?? '' };
  }

  @GrpcMethod(SERVICE, 'Inspect')
  async inspect(request: { deploymentId: string }, _metadata: Metadata, call: Call) {
    return deploymentMessage(await this.door.inspect(callActor(call), 'grpc', request.deploymentId));
  }

  @GrpcMethod(SERVICE, 'ListRuns')
  async listRuns(request: { deploymentId: string; cursor: string; limit: number }, _metadata: Metadata, call: Call) {
    if (request.limit > 200) throw new ValidationError('invalid request', [{ path: 'limit', message: 'at most 200' }]);
    const page = await this.door.listRuns(callActor(call), 'grpc', request.deploymentId, textField(request.cursor, 'cursor', 300), request.limit || 50);
    return { items: page.items.map(runMessage), nextCursor: page.nextCursor ?? '' };
  }

  @GrpcMethod(SERVICE, 'GetRun')
  async getRun(request: { runId: string }, _metadata: Metadata, call: Call) {
    return runMessage(await this.door.getRun(callActor(call), 'grpc', request.runId));
  }

  @GrpcMethod(SERVICE, 'Pause')
  pause(request: { deploymentId: string; reason: string }, _metadata: Metadata, call: Call) {
    return this.control(call, request, 'pause', null);
  }

  @GrpcMethod(SERVICE, 'Resume')
  resume(request: { deploymentId: string; reason: string }, _metadata: Metadata, call: Call) {
    return this.control(call, request, 'resume', null);
  }

  @GrpcMethod(SERVICE, 'Rollback')
  rollback(request: { deploymentId: string; reason: string; version: number }, _metadata: Metadata, call: Call) {
    if (!request.version) throw new ValidationError('invalid request', [{ path: 'version', message: 'the version to roll back to' }]);
    return this.control(call, request, 'rollback', request.version);
  }

  @GrpcMethod(SERVICE, 'Revoke')
  revoke(request: { deploymentId: string; reason: string }, _metadata: Metadata, call: Call) {
    return this.control(call, request, 'revoke', null);
  }

  @GrpcMethod(SERVICE, 'Acknowledge')
  async acknowledge(request: { cursor: string; ifRevision: number; conditional: boolean }, _metadata: Metadata, call: Call) {
    const who = callActor(call);
    const cursor = await this.calls.run(who, 'events', 'grpc', {}, () =>
      this.acknowledgements.acknowledge(who.workspaceId, who.actorName, parseFeedCursor(request.cursor, 'cursor'), request.conditional || request.ifRevision ? request.ifRevision : null),
    );
    return { cursor: formatFeedCursor(cursor.position), revision: cursor.revision };
  }

  @GrpcMethod(SERVICE, 'GetAcknowledged')
  async getAcknowledged(_request: unknown, _metadata: Metadata, call: Call) {
    const who = callActor(call);
    const cursor = await this.calls.run(who, 'events', 'grpc', {}, () => this.acknowledgements.current(who.workspaceId, who.actorName));
    return { cursor: formatFeedCursor(cursor.position), revision: cursor.revision };
  }

  /**
   * Server streaming: events are written to the call directly, each after the previous one
   * drained, so a slow client slows its own session (never the server's memory). The stream
   * ends with UNAVAILABLE when the server stops, so the client reconnects from its cursor.
   */
  @GrpcMethod(SERVICE, 'WatchEvents')
  watchEvents(request: { cursor: string }, _metadata: Metadata, call: ServerWritableStream<unknown, unknown>): Observable<never> {
    const who = callActor(call);
    return new Observable<never>((subscriber) => {
      let session: { close(reason: 'client_gone'): void } | null = null;
      let gone = false;
      const fail = (error: unknown) => subscriber.error(grpcErrorOf(toProblem(error, randomUUID())));
      const sink: FeedSink = {
        send: (event) =>
          new Promise<void>((resolve) => {
            if (gone || call.write(feedEventMessage(event))) return resolve();
            const done = () => {
              call.off('drain', done);
              call.off('cancelled', done);
              resolve();
            };
            call.on('drain', done);
            call.on('cancelled', done);
          }),
        heartbeat: () => undefined,
        end: (reason, detail) => {
          if (reason === 'client_gone') subscriber.complete();
          else fail(new FeedEndedError(detail ?? 'the event stream ended; reconnect from your last cursor'));
        },
      };
      call.on('cancelled', () => {
        gone = true;
        session?.close('client_gone');
      });
      this.calls
        .run(who, 'events', 'grpc', {}, async () => {
          const after = request.cursor ? parseFeedCursor(request.cursor, 'cursor') : (await this.acknowledgements.current(who.workspaceId, who.actorName)).position;
          return { after, release: this.feed.reserve(who.workspaceId) };
        })
        .then(async ({ after, release }) => {
          session = await this.feed.follow(who, after, sink, release);
          if (gone) session.close('client_gone');
        })
        .catch(fail);
      return () => {
        gone = true;
        session?.close('client_gone');
      };
    });
  }

  private async control(call: Call, request: { deploymentId: string; reason: string }, action: DeploymentAction, version: number | null) {
    const reason = textField(request.reason, 'reason', 500);
    return deploymentMessage(await this.door.control(callActor(call), 'grpc', request.deploymentId, action, reason, version));
  }
}

/** The server ended a WatchEvents stream (it is stopping, or the feed could not be read). */
class FeedEndedError extends DomainError {
  readonly code = 'feed_unavailable';
  override readonly retryable = true;
}

/** An optional proto3 string: empty is absent; too long, or a value Postgres cannot hold, is refused. */
function textField(value: string, path: string, max: number): string | null {
  if (!value) return null;
  const issues = jsonIssues(value, path);
  if (value.length > max) issues.push({ path, message: `at most ${max} characters` });
  if (issues.length > 0) throw new ValidationError('invalid request', issues);
  return value;
}

function inputOf(text: string): JsonValue | null {
  if (!text) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError('invalid request', [{ path: 'input_json', message: 'not valid JSON' }]);
  }
  const issues = jsonIssues(value, 'input_json');
  if (issues.length > 0) throw new ValidationError('invalid request', issues);
  return value as JsonValue;
}
