import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ComputerErrorCodes } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';
import { PROBLEM_CONTENT_TYPE, problemStatusFor, problemTitle, toProblem } from '../http/problem';
import { ProblemFilter } from '../http/problem.filter';
import { requestIdOf } from '../http/request-context';

const COMPUTER_CODES: ReadonlySet<string> = new Set(Object.values(ComputerErrorCodes));
const HOST_KEY_CODES: ReadonlySet<string> = new Set([ComputerErrorCodes.hostKeyUnpinned, ComputerErrorCodes.hostKeyChanged]);
const FINGERPRINT = /SHA256:[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/])/;

/**
 * The fingerprint a host presented, for the operator to verify and send back as `acceptHostKey`:
 * the registry names it in the issue at `acceptHostKey` and in its message.
 */
export function presentedHostKeyOf(error: RemoteCommandError): string | null {
  const texts = [...error.issues.filter((issue) => issue.path === 'acceptHostKey').map((issue) => issue.message), error.message];
  for (const text of texts) {
    const found = FINGERPRINT.exec(text);
    if (found) return found[0];
  }
  return null;
}

/**
 * The registry's refusals keep their own status even when they carry issues (which would make
 * any other remote error a 400): `host_key_unpinned` is a 409 whose body names the presented
 * fingerprint as `presentedHostKey`, beside the issues. Everything else goes the way of every route.
 */
@Catch()
export class ComputerProblemFilter implements ExceptionFilter {
  private readonly fallback = new ProblemFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    if (!(exception instanceof RemoteCommandError) || !COMPUTER_CODES.has(exception.code) || host.getType() !== 'http') return this.fallback.catch(exception, host);
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    if (reply.sent) return;
    const status = problemStatusFor(exception.code);
    const problem = toProblem(exception, requestIdOf(http.getRequest<FastifyRequest>()));
    const presented = HOST_KEY_CODES.has(exception.code) ? presentedHostKeyOf(exception) : null;
    const body = {
      ...problem.body,
      status,
      title: problemTitle(status),
      ...(presented ? { presentedHostKey: presented } : {}),
      ...(exception.issues.length ? { errors: exception.issues.map(({ path, message }) => ({ path, message })) } : {}),
    };
    reply.status(status).header('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(JSON.stringify(body));
  }
}
