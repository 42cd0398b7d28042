import { randomBytes } from 'node:crypto';
import { OAuthReturnToSchema } from '@packetagent/contracts';
import { consoleCsp, isReservedPath } from '../console/console-assets';

/** As the console's own pages are served (ConsoleController), with the framing and referrer locked down. */
export const CALLBACK_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  // The callback's URL carries the authorization code and state: no page it leads to may learn it.
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  'cache-control': 'no-store',
};

/** The query parameter the console reads to confirm a connection: the credential's name. */
export const CONNECTED_PARAM = 'mcp_connected';

const PLACEHOLDER_ORIGIN = 'http://console.invalid';

/**
 * Where to send the operator once connected: the console page `returnTo` names, with
 * `mcp_connected=<credential>` added to its query. Null (answer the page instead) for anything
 * that is not plainly a console page: not a valid returnTo, dot segments, an API path.
 */
export function consoleLocation(returnTo: string | null, credential: string): string | null {
  if (returnTo === null || !OAuthReturnToSchema.safeParse(returnTo).success) return null;
  const [path = '/', ...query] = returnTo.split('?');
  const url = new URL(`${path}${query.length ? `?${query.join('?')}` : ''}`, PLACEHOLDER_ORIGIN);
  // A path the URL parser changed (dot segments, a second leading slash) is not the one that was checked.
  if (url.origin !== PLACEHOLDER_ORIGIN || url.pathname !== path || isReservedPath(url.pathname)) return null;
  url.searchParams.set(CONNECTED_PARAM, credential);
  return `${url.pathname}${url.search}`;
}

const JSON_TYPES = ['application/json', 'application/problem+json'];
const HTML_TYPES = ['text/html'];

/** The q-value `accept` gives a media type: that of the most specific range matching it, 0 when none does. */
function qualityOf(ranges: ReadonlyArray<{ type: string; q: number }>, mediaType: string): number {
  const [type] = mediaType.split('/');
  const candidates = [mediaType, `${type}/*`, '*/*'];
  for (const candidate of candidates) {
    const matching = ranges.filter((range) => range.type === candidate);
    if (matching.length) return Math.max(...matching.map((range) => range.q));
  }
  return 0;
}

/**
 * Whether the caller asked for JSON over HTML (`Accept: application/json`, a script); a browser
 * (text/html first), a bare wildcard and no Accept at all get the page.
 */
export function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = accept
    .slice(0, 1024)
    .split(',')
    .map((part) => {
      const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
      const q = parameters.find((parameter) => parameter.startsWith('q='));
      const quality = q === undefined ? 1 : Number(q.slice(2));
      return { type, q: Number.isFinite(quality) ? Math.min(1, Math.max(0, quality)) : 0 };
    })
    .filter((range) => range.type.includes('/'));
  const json = Math.max(...JSON_TYPES.map((type) => qualityOf(ranges, type)));
  const html = Math.max(...HTML_TYPES.map((type) => qualityOf(ranges, type)));
  return json > 0 && json > html;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface CallbackPage {
  html: string;
  csp: string;
}

function page(title: string, body: string): CallbackPage {
  const nonce = randomBytes(16).toString('base64');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>PacketAgent: ${escapeHtml(title)}</title>
<style nonce="${nonce}">body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1f2328}code{font-family:ui-monospace,monospace;background:#f6f8fa;padding:0 0.2em}.hint{color:#59636e;font-size:0.9rem}</style>
</head><body><main>
${body}
</main></body></html>
`;
  return { html, csp: consoleCsp(nonce) };
}

/** The answer when the flow has no console page to return to. */
export function connectedPage(credential: string, resource: string): CallbackPage {
  return page(
    'MCP server connected',
    `<h1>Connected</h1>
<p>The credential <code>${escapeHtml(credential)}</code> now holds the connection to <code>${escapeHtml(resource)}</code>. The vault keeps its tokens and refreshes them before they expire.</p>
<p>You may close this window.</p>`,
  );
}

/** The answer when the authorization server's answer did not complete a flow; `message` says why. */
export function failedPage(message: string, requestId: string): CallbackPage {
  return page(
    'MCP server not connected',
    `<h1>Not connected</h1>
<p>${escapeHtml(message)}</p>
<p>Start the connection again from the worker's page in the console, or with <code>packetagent mcp connect</code>.</p>
<p class="hint">Request id ${escapeHtml(requestId)}</p>`,
  );
}
