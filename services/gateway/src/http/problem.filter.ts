import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, toProblem } from './problem';
import { requestIdOf } from './request-context';

/** Every error of every HTTP route, and Fastify's own (body limits, bad JSON), as problem+json. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const requestId = requestIdOf(request);
    const problem = toProblem(exception, requestId);
    if (problem.cause !== undefined) {
      const cause = problem.cause;
      const text = cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : String(cause);
      this.logger.error(`request=${requestId} ${request.method} ${request.routeOptions.url ?? '(no route)'} failed: ${text}`);
    }
    if (reply.sent) return;
    reply.status(problem.status).headers(problem.headers).header('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(JSON.stringify(problem.body));
  }
}
