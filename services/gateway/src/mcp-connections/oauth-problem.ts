import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, OAuthErrorCodes } from '@packetagent/contracts';
import { PROBLEM_CONTENT_TYPE, problemTitle, toProblem, type Problem } from '../http/problem';
import { ProblemFilter } from '../http/problem.filter';
import { requestIdOf } from '../http/request-context';

/**
 * The vault's refusals of a connection keep one status whatever else they carry (retryable, issues):
 * beginning is refused with 422 (the server's authorization cannot be used as declared), and the
 * authorization server's answer with 400 (that answer cannot complete a flow).
 */
export const OAUTH_PROBLEM_STATUS: Readonly<Record<string, number>> = Object.freeze({
  [OAuthErrorCodes.discoveryFailed]: 422,
  [OAuthErrorCodes.clientRequired]: 422,
  [OAuthErrorCodes.registrationFailed]: 422,
  [OAuthErrorCodes.flowUnknown]: 400,
  [OAuthErrorCodes.authorizationDenied]: 400,
  [OAuthErrorCodes.exchangeFailed]: 400,
});

/** Only the vault's own OAuth codes are re-mapped; everything else answers as on every route. */
export function isOAuthRefusal(exception: unknown): exception is DomainError {
  return exception instanceof DomainError && OAUTH_PROBLEM_STATUS[exception.code] !== undefined;
}

/** The problem document of anything thrown while beginning, listing or completing a connection. */
export function oauthProblem(exception: unknown, requestId: string): Problem {
  const problem = toProblem(exception, requestId);
  if (!isOAuthRefusal(exception)) return problem;
  const status = OAUTH_PROBLEM_STATUS[exception.code]!;
  return { status, headers: {}, body: { ...problem.body, status, title: problemTitle(status), detail: exception.message } };
}

/** problem+json for the connection routes, with the vault's OAuth refusals at their own status. */
@Catch()
export class OAuthProblemFilter implements ExceptionFilter {
  private readonly fallback = new ProblemFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    if (!isOAuthRefusal(exception) || host.getType() !== 'http') return this.fallback.catch(exception, host);
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    if (reply.sent) return;
    const problem = oauthProblem(exception, requestIdOf(http.getRequest<FastifyRequest>()));
    reply.status(problem.status).header('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(JSON.stringify(problem.body));
  }
}
