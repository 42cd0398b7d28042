import { Catch, Logger, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { loadSync, type Root, type Type } from 'protobufjs';
import { throwError, type Observable } from 'rxjs';
import { toProblem, type Problem } from '../../http/problem';
import { PACKETADE_PROTO_DIR } from './grpc-server';

/** The error a gRPC handler answers with: grpc-js sends `code`, `details` and `metadata` as the call's status. */
export interface GrpcError {
  code: GrpcStatus;
  details: string;
  metadata: Metadata;
}

const STATUS_BY_HTTP: Readonly<Record<number, GrpcStatus>> = {
  400: GrpcStatus.INVALID_ARGUMENT,
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.NOT_FOUND,
  409: GrpcStatus.FAILED_PRECONDITION,
  410: GrpcStatus.NOT_FOUND,
  412: GrpcStatus.FAILED_PRECONDITION,
  413: GrpcStatus.RESOURCE_EXHAUSTED,
  415: GrpcStatus.INVALID_ARGUMENT,
  422: GrpcStatus.FAILED_PRECONDITION,
  429: GrpcStatus.RESOURCE_EXHAUSTED,
  503: GrpcStatus.UNAVAILABLE,
  504: GrpcStatus.DEADLINE_EXCEEDED,
};

// Conflicts a client can retry as they are (the same request again) are ABORTED, per the gRPC guide.
const ABORTED_CODES = new Set(['concurrency_conflict', 'command_in_progress']);

let types: { status: Type; errorInfo: Type; badRequest: Type; retryInfo: Type } | null = null;

function messageTypes() {
  if (!types) {
    const root: Root = loadSync([join(PACKETADE_PROTO_DIR, 'google/rpc/status.proto'), join(PACKETADE_PROTO_DIR, 'google/rpc/error_details.proto')]);
    types = {
      status: root.lookupType('google.rpc.Status'),
      errorInfo: root.lookupType('google.rpc.ErrorInfo'),
      badRequest: root.lookupType('google.rpc.BadRequest'),
      retryInfo: root.lookupType('google.rpc.RetryInfo'),
    };
  }
  return types;
}

// google.protobuf.Any is protobufjs's built-in definition, whose fields keep their proto names (type_url).
function any(type: Type, value: Record<string, unknown>) {
  return { type_url: `type.googleapis.com/${type.fullName.slice(1)}`, value: type.encode(type.fromObject(value)).finish() };
}

/**
 * The same refusal as the REST API's problem document, as a gRPC status: the code from the
 * problem's HTTP status, the detail as the message, and google.rpc.Status in
 * grpc-status-details-bin with ErrorInfo (reason: the problem code), BadRequest (one violation
 * per issue) and RetryInfo when the server asks for a wait. A 5xx says only that it failed.
 */
export function grpcErrorOf(problem: Problem): GrpcError {
  const { body } = problem;
  const code = ABORTED_CODES.has(body.code) ? GrpcStatus.ABORTED : (STATUS_BY_HTTP[body.status] ?? (body.status >= 500 ? GrpcStatus.INTERNAL : GrpcStatus.FAILED_PRECONDITION));
  const t = messageTypes();
  const details = [any(t.errorInfo, { reason: body.code, domain: 'packetagent', metadata: { requestId: body.requestId, httpStatus: String(body.status) } })];
  if (body.errors?.length) details.push(any(t.badRequest, { fieldViolations: body.errors.map((issue) => ({ field: issue.path, description: issue.message })) }));
  const retryAfter = Number(problem.headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter > 0) details.push(any(t.retryInfo, { retryDelay: { seconds: retryAfter } }));
  const message = body.errors?.length ? `${body.detail}: ${body.errors.map((issue) => `${issue.path || '(document)'}: ${issue.message}`).join('; ')}` : body.detail;
  const metadata = new Metadata();
  metadata.set('grpc-status-details-bin', Buffer.from(t.status.encode(t.status.fromObject({ code, message, details })).finish()));
  return { code, details: message, metadata };
}

/** Every error of the gRPC door, guard refusals included, leaves as grpcErrorOf says; causes of 5xx go to the log only. */
@Catch()
export class GrpcProblemFilter implements RpcExceptionFilter {
  private readonly logger = new Logger('packetade-grpc');

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    const problem = toProblem(exception, randomUUID());
    if (problem.cause !== undefined) this.logger.error(`gRPC call failed (request ${problem.body.requestId}): ${problem.cause instanceof Error ? (problem.cause.stack ?? problem.cause.message) : String(problem.cause)}`);
    return throwError(() => grpcErrorOf(problem));
  }
}
