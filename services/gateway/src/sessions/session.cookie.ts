import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { NewSession } from './session.store';

export const SESSION_COOKIE = 'pa_session';
export const CSRF_HEADER = 'x-csrf-token';

const SESSION_ID = /^[A-Za-z0-9_-]{16,128}$/;

export function sessionIdFrom(request: FastifyRequest): string | null {
  // Without the cookie plugin registered there are no cookies, hence no session.
  const value = request.cookies?.[SESSION_COOKIE];
  return value && SESSION_ID.test(value) ? value : null;
}

function cookieOptions(secure: boolean): CookieSerializeOptions {
  return { httpOnly: true, sameSite: 'strict', secure, path: '/' };
}

export function setSessionCookie(reply: FastifyReply, session: NewSession, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, session.sessionId, { ...cookieOptions(secure), maxAge: session.ttlSeconds });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(secure));
}
