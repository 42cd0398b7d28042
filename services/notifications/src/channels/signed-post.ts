import { checkedFetch, CheckedFetchError } from '@packetagent/tools';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import type { ChannelDelivery, ChannelOutcome } from './channel';
import { retryAfterMs } from './retry-after';

const MAX_RESPONSE_BYTES = 16 * 1024;
/** Standard Webhooks: retry on these; any other 4xx is the receiver refusing this message. */
const RETRYABLE_STATUSES = new Set([408, 409, 425, 429]);

const SignedEndpointSchema = z.strictObject({
  url: z.string().min(1).max(2048),
  /** Standard Webhooks' `whsec_` followed by the base64 of 24 to 64 random bytes. */
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/),
  /** PEM certificates to trust for this endpoint instead of the system's (a private CA). */
  ca: z.string().min(1).max(64 * 1024).optional(),
});

export interface SignedEndpoint {
  url: URL;
  secret: string;
  ca?: string;
}

/**
 * A route credential of the form `{"url": ..., "secret": "whsec_...", "ca"?: "<PEM>"}`, or why
 * it is unusable (never quoting it).
 */
export function parseSignedEndpoint(value: string | null, channel: string, options: { httpsOnly?: boolean } = {}): { ok: true; value: SignedEndpoint } | { ok: false; message: string } {
  const shape = `{"url": "https://...", "secret": "whsec_<base64>"}`;
  if (value === null) return { ok: false, message: `the ${channel} route names no credential` };
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { ok: false, message: `the ${channel} credential is not JSON ${shape}` };
  }
  const parsed = SignedEndpointSchema.safeParse(json);
  if (!parsed.success) return { ok: false, message: `the ${channel} credential must be ${shape}` };
  let url: URL;
  try {
    url = new URL(parsed.data.url);
  } catch {
    return { ok: false, message: `the ${channel} credential's url is not a URL` };
  }
  if (url.protocol !== 'https:' && (options.httpsOnly || url.protocol !== 'http:')) {
    return { ok: false, message: `the ${channel} credential's url must be ${options.httpsOnly ? 'https' : 'http or https'}` };
  }
  if (url.username || url.password) return { ok: false, message: `the ${channel} credential's url must not carry a user or password` };
  return { ok: true, value: { url, secret: parsed.data.secret, ...(parsed.data.ca ? { ca: parsed.data.ca } : {}) } };
}

/**
 * One JSON request signed as Standard Webhooks sign them: `webhook-id` is the delivery id on
 * every attempt (receivers deduplicate on it), `webhook-timestamp` the attempt's time,
 * `webhook-signature` `v1,<HMAC-SHA256>` over `id.timestamp.body`. Through the checked network
 * client: a private destination needs the operator's allowlist.
 */
export async function signedJsonRequest(
  delivery: ChannelDelivery,
  input: { endpoint: SignedEndpoint; url: URL; method: 'POST' | 'PUT'; body: string; userAgent: string; now: Date; clock: () => Date },
): Promise<ChannelOutcome> {
  const signature = new Webhook(input.endpoint.secret).sign(delivery.message.deliveryId, input.now, input.body);
  try {
    const response = await checkedFetch({
      url: input.url,
      method: input.method,
      headers: {
        'content-type': 'application/json',
        'user-agent': input.userAgent,
        'webhook-id': delivery.message.deliveryId,
        'webhook-timestamp': String(Math.floor(input.now.getTime() / 1_000)),
        'webhook-signature': signature,
      },
      body: Buffer.from(input.body, 'utf8'),
      maxResponseBytes: MAX_RESPONSE_BYTES,
      timeoutMs: delivery.timeoutMs,
      allowPrivate: delivery.allowPrivate,
      signal: delivery.signal,
      ...(input.endpoint.ca ? { ca: input.endpoint.ca } : {}),
    });
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    return {
      ok: false,
      retryable: response.status >= 500 || RETRYABLE_STATUSES.has(response.status),
      status: response.status,
      code: `http_${response.status}`,
      message: `the receiver answered ${response.status} ${response.statusText}`.trim(),
      retryAfterMs: retryAfterMs(response.headers['retry-after'], input.clock()),
    };
  } catch (error) {
    if (error instanceof CheckedFetchError) {
      // The message may quote the URL, which can itself be a secret: say what failed, not where.
      return { ok: false, retryable: error.code !== 'destination_not_allowed' && error.code !== 'invalid_url', status: null, code: error.code, message: `the receiver could not be reached (${error.code})` };
    }
    throw error;
  }
}
