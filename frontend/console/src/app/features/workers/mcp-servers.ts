import type { Tone } from '../../shared/format';

export interface McpBadge {
  text: string;
  tone: Tone;
}

export interface McpToolRow {
  name: string;
  /** The annotation `title`, when the server gave one. */
  title: string | null;
  description: string;
  digest: string;
  digestPrefix: string;
  badges: McpBadge[];
  /** The grant that decides a call (`mcp:<server>/<tool>` before `mcp:<server>/*`), or null: every call is denied. */
  grant: string | null;
}

/** A server's `oauth` (McpOAuthSchema of libs/contracts sandbox/mcp.v1.ts): the vault keeps the connection as `credential`. */
export interface McpServerOAuth {
  credential: string;
  scopes: string[];
  clientId: string | null;
}

export interface McpServerView {
  name: string;
  transport: string;
  /** The URL of an http server, the command line of a stdio one. */
  target: string;
  trusted: boolean;
  credential: string | null;
  /** Set for an http server that authorizes with OAuth; null for every other. */
  oauth: McpServerOAuth | null;
  tools: McpToolRow[];
}

const DIGEST_PREFIX = 12;
const DESCRIPTION_CHARS = 300;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** Hints are the server's claims; destructive is the one policy always honours (a person approves every call). */
export function annotationBadges(annotations: unknown): McpBadge[] {
  if (!isObject(annotations)) return [];
  const badges: McpBadge[] = [];
  if (annotations['readOnlyHint'] === true) badges.push({ text: 'read-only', tone: 'ok' });
  if (annotations['destructiveHint'] === true) badges.push({ text: 'destructive', tone: 'bad' });
  if (annotations['idempotentHint'] === true) badges.push({ text: 'idempotent', tone: 'neutral' });
  if (annotations['openWorldHint'] === true) badges.push({ text: 'open world', tone: 'neutral' });
  return badges;
}

/** The resources of the `mcp` grants that grant calls, in the order the definition lists them. */
function grantedResources(grants: unknown): string[] {
  return objects(grants)
    .filter((grant) => grant['tool'] === 'mcp' && strings(grant['verbs']).includes('call'))
    .flatMap((grant) => strings(grant['resources']));
}

function grantOf(resources: readonly string[], server: string, tool: string): string | null {
  const named = [`${server}/${tool}`, `${server}/*`].find((resource) => resources.includes(resource));
  return named === undefined ? null : `mcp:${named}`;
}

function shortened(description: string): string {
  return description.length > DESCRIPTION_CHARS ? `${description.slice(0, DESCRIPTION_CHARS - 1)}…` : description;
}

function oauthOf(server: Json): McpServerOAuth | null {
  const oauth = server['oauth'];
  if (server['transport'] !== 'http' || !isObject(oauth) || typeof oauth['credential'] !== 'string' || !oauth['credential']) return null;
  return { credential: oauth['credential'], scopes: strings(oauth['scopes']), clientId: typeof oauth['clientId'] === 'string' ? oauth['clientId'] : null };
}

function targetOf(server: Json): string {
  if (server['transport'] === 'http') return text(server['url']);
  return [text(server['command']), ...strings(server['args']).map((arg) => (/^[^\s"']+$/.test(arg) ? arg : JSON.stringify(arg)))].join(' ');
}

/** Each server a stored definition declares, with the tools its version pinned and whether a grant covers each. */
export function mcpServersOf(definition: unknown): McpServerView[] {
  if (!isObject(definition)) return [];
  const resources = grantedResources(definition['tools']);
  return objects(definition['mcp']).map((server) => {
    const name = text(server['name']);
    return {
      name,
      transport: text(server['transport']),
      target: targetOf(server),
      trusted: server['trusted'] === true,
      credential: typeof server['credential'] === 'string' ? server['credential'] : null,
      oauth: oauthOf(server),
      tools: objects(server['tools']).map((tool) => {
        const annotations = isObject(tool['annotations']) ? tool['annotations'] : {};
        const digest = text(tool['digest']);
        return {
          name: text(tool['name']),
          title: typeof annotations['title'] === 'string' && annotations['title'] ? annotations['title'] : null,
          description: shortened(text(tool['description'])),
          digest,
          digestPrefix: digest.slice(0, DIGEST_PREFIX),
          badges: annotationBadges(annotations),
          grant: grantOf(resources, name, text(tool['name'])),
        };
      }),
    };
  });
}

/** What policy assumes of every call to the server's tools, beyond what each grant says. */
export function trustNote(server: Pick<McpServerView, 'trusted'>): string {
  return server.trusted
    ? 'Its read-only and idempotent hints loosen what policy assumes of a call (not mutating, repeatable after a crash).'
    : 'Its hints do not loosen policy: every call is treated as mutating and not idempotent.';
}
