import { z } from 'zod';

export const SLACK_API_BASE_URL = 'https://slack.com/api/';

export type SlackCredential =
  /** An incoming webhook: its URL is the secret, and it posts to the one channel it was made for. */
  | { kind: 'webhook'; url: URL }
  /** A bot token for the Web API, which can post to any channel the app is in and edit its messages. */
  | { kind: 'bot'; token: string; apiBaseUrl: URL };

const BotCredentialSchema = z.strictObject({
  botToken: z.string().regex(/^xox[bp]-[A-Za-z0-9-]{1,250}$/),
  apiBaseUrl: z.string().min(1).max(2048).optional(),
});

const SHAPE = 'an incoming-webhook URL, or JSON {"botToken": "xoxb-...", "apiBaseUrl"?: "https://slack.com/api/"}';

function httpUrl(raw: string): URL | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username || url.password) return null;
  return url;
}

/**
 * The route credential's value, or why it is unusable. Messages never quote it: the webhook
 * URL and the token are both the secret.
 */
export function parseSlackCredential(value: string | null): { ok: true; value: SlackCredential } | { ok: false; code: string; message: string } {
  if (value === null) return { ok: false, code: 'credential_required', message: `the Slack route names no credential: it holds ${SHAPE}` };
  const text = value.trim();
  if (!text.startsWith('{')) {
    const url = httpUrl(text);
    if (!url) return { ok: false, code: 'credential_invalid', message: `the Slack credential is neither a webhook URL nor bot JSON; it holds ${SHAPE}` };
    return { ok: true, value: { kind: 'webhook', url } };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, code: 'credential_invalid', message: `the Slack credential is not JSON; it holds ${SHAPE}` };
  }
  const parsed = BotCredentialSchema.safeParse(json);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(value)'))].join(', ');
    return { ok: false, code: 'credential_invalid', message: `the Slack credential's ${fields} ${fields.includes(',') ? 'are' : 'is'} not valid; it holds ${SHAPE}` };
  }
  const base = httpUrl(parsed.data.apiBaseUrl ?? SLACK_API_BASE_URL);
  if (!base) return { ok: false, code: 'credential_invalid', message: 'the Slack credential\'s apiBaseUrl is not an http(s) URL without a user or password' };
  // Method names are resolved against it, so it must end with a slash to keep its path.
  if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
  return { ok: true, value: { kind: 'bot', token: parsed.data.botToken, apiBaseUrl: base } };
}

/**
 * Plain http would put the secret on the wire: only to a private `host:port` the operator
 * allowlisted (a local relay or a test server), never to a public one.
 */
export function plaintextRefused(url: URL, allowPrivate: readonly string[]): boolean {
  if (url.protocol === 'https:') return false;
  const port = url.port || '80';
  return !allowPrivate.includes(`${url.hostname}:${port}`);
}
