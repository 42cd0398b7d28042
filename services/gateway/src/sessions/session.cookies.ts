import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';
import { clearSessionCookie, setSessionCookie } from './session.cookie';
import type { NewSession } from './session.store';

/** Sets and clears the session cookie with the configured `Secure` flag. */
@Injectable()
export class SessionCookies {
  constructor(@Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions) {}

  issue(reply: FastifyReply, session: NewSession): void {
    setSessionCookie(reply, session, this.options.cookieSecure);
  }

  clear(reply: FastifyReply): void {
    clearSessionCookie(reply, this.options.cookieSecure);
  }
}
