import type { FastifyInstance } from 'fastify';

/** On every response (OWASP ASVS V14.4): no sniffing, no referrer, no framing. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
});

/**
 * API answers are data, never a page: nothing may load from them or frame them. A response that
 * is a page (the console, a callback page) sets its own policy, which is kept.
 */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** Answers carry workspace data; a route whose content may be cached (console files, payloads) says so itself. */
export const DEFAULT_CACHE_CONTROL = 'no-store';

export const DEFAULT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...SECURITY_HEADERS,
  'content-security-policy': API_CSP,
  'cache-control': DEFAULT_CACHE_CONTROL,
});

/** Adds the default headers a route did not set to every response. */
export function installSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(DEFAULT_HEADERS)) {
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
    return payload;
  });
}
