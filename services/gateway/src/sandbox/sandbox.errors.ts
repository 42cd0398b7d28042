import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, SandboxErrorCodes, ValidationError, type ValidationIssue } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';
import { PROBLEM_CONTENT_TYPE, problemTitle, toProblem } from '../http/problem';
import { ProblemFilter } from '../http/problem.filter';
import { requestIdOf } from '../http/request-context';

/** A well-formed command the gateway will not send: no shell, so no shell metacharacters. Nothing ran. */
export class ExecRefusedError extends DomainError {
  readonly code = SandboxErrorCodes.refused;
  constructor(
    message: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(message);
  }
}

/** The exec is still running: its whole output is kept when it ends. */
export class ExecOutputNotReadyError extends DomainError {
  readonly code = 'exec_running_conflict';
}

/** Stored output that no longer adds up to the size and digest of its result: the server's storage is at fault. */
export class OutputDigestMismatchError extends DomainError {
  readonly code = 'payload_digest_mismatch';
}

/** The workspace already follows as many execs on this replica as it may. */
export class ExecStreamsRateLimitedError extends DomainError {
  readonly code = 'exec_streams_rate_limited';
  readonly retryAfterSeconds = 5;
  constructor(limit: number) {
    super(`the workspace already has ${limit} open exec streams here; close one or retry later`);
  }
}

/** An exec id from the path, checked before it goes anywhere. */
export function invalidExecId(): ValidationError {
  return new ValidationError('invalid exec id', [{ path: 'id', message: 'expected 1-160 of A-Z a-z 0-9 _ : . -' }]);
}

/**
 * The sandbox's refusal (`exec_refused`, every issue with its path) and the gateway's own leave
 * as 422 with the issues: the request was valid, what it asks for is not allowed. Everything
 * else goes the way of every route.
 */
@Catch()
export class ExecRefusedFilter implements ExceptionFilter {
  private readonly fallback = new ProblemFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const issues = refusalIssues(exception);
    if (issues === null || host.getType() !== 'http') return this.fallback.catch(exception, host);
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    if (reply.sent) return;
    const problem = toProblem(exception, requestIdOf(http.getRequest<FastifyRequest>()));
    const body = { ...problem.body, status: 422, title: problemTitle(422), errors: issues.map(({ path, message }) => ({ path, message })) };
    reply.status(422).header('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(JSON.stringify(body));
  }
}

function refusalIssues(exception: unknown): readonly ValidationIssue[] | null {
  if (exception instanceof ExecRefusedError) return exception.issues;
  if (exception instanceof RemoteCommandError && exception.code === SandboxErrorCodes.refused) return exception.issues;
  return null;
}
