import type { Command } from 'commander';
import { z } from 'zod';
import type { CommandContext } from '../context';
import { ApiError, CliError, ConnectionError, ExitCode, UsageError } from '../errors';
import { findWorker } from './workers';

/** Only the fields read here: a stored definition carries much more. */
const OAuthSchema = z.looseObject({ credential: z.string(), scopes: z.array(z.string()).default([]), clientId: z.string().optional() });
const ServerSchema = z.looseObject({ name: z.string(), transport: z.string(), url: z.string().optional(), oauth: OAuthSchema.optional() });
const VersionListSchema = z.looseObject({ items: z.array(z.looseObject({ version: z.number().int().positive() })) });
const VersionSchema = z.looseObject({ version: z.number().int().positive(), definition: z.looseObject({ mcp: z.array(ServerSchema).default([]) }) });

const BeginAnswerSchema = z.looseObject({
  authorizationUrl: z.string(),
  expiresAt: z.string(),
  credential: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  registered: z.boolean(),
});
type BeginAnswer = z.infer<typeof BeginAnswerSchema>;

const ConnectionSchema = z.looseObject({
  credential: z.string(),
  version: z.number(),
  resource: z.string(),
  issuer: z.string().optional(),
  clientId: z.string().optional(),
  scope: z.string().nullish(),
  state: z.string(),
  reason: z.string().nullish(),
  expiresAt: z.string().nullish(),
  connectedAt: z.string(),
});
type Connection = z.infer<typeof ConnectionSchema>;
const ConnectionListSchema = z.looseObject({ items: z.array(ConnectionSchema) });

export const POLL_INTERVAL_MS = 1_000;
export const DEFAULT_TIMEOUT_SECONDS = 600;

export interface ConnectOptions {
  url?: string;
  credential?: string;
  scope: string[];
  clientId?: string;
  /** False with --no-wait: print the URL and return. */
  wait: boolean;
  /** Seconds to wait for the connection. */
  timeout: number;
}

export interface McpConnectIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** --json: the result alone goes to stdout, as JSON; what the operator has to do goes to stderr. */
  json: boolean;
  now(): number;
  sleep(ms: number): Promise<void>;
}

interface ConnectTarget {
  /** How the messages name the server: `<worker>/<server>`, or its URL. */
  label: string;
  body: { url: string; oauth: { credential: string; scopes?: string[]; clientId?: string } };
}

function targetFromFlags(options: ConnectOptions, serverName: string | undefined): ConnectTarget {
  const url = options.url!;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url "${url}" is not http or https`);
  if (!options.credential) throw new UsageError('--url needs --credential: the vault credential to keep the connection in');
  const oauth = { credential: options.credential, ...(options.scope.length ? { scopes: options.scope } : {}), ...(options.clientId ? { clientId: options.clientId } : {}) };
  return { label: serverName ? `${serverName} (${url})` : url, body: { url, oauth } };
}

/** The server as the worker's latest version declares it, with its `oauth`. */
async function targetFromVersion(context: CommandContext, workerRef: string, serverName: string): Promise<ConnectTarget> {
  const { client } = context;
  const worker = await findWorker(client, (candidate) => candidate.id === workerRef || candidate.name === workerRef);
  if (!worker) throw new CliError(`no worker named or identified "${workerRef}" in this workspace`, ExitCode.failure);
  const list = await client.get(client.workspacePath('workers', worker.id, 'versions'), VersionListSchema);
  const latest = Math.max(0, ...list.items.map((item) => item.version));
  if (latest === 0) {
    throw new CliError(`worker ${worker.name} has no versions yet: connect the server with --url and --credential first (a version's tools are listed with the token)`, ExitCode.failure);
  }
  const version = await client.get(client.workspacePath('workers', worker.id, 'versions', latest), VersionSchema);
  const server = version.definition.mcp.find((candidate) => candidate.name === serverName);
  if (!server) {
    const names = version.definition.mcp.map((candidate) => candidate.name);
    throw new CliError(`version ${version.version} of ${worker.name} declares no MCP server "${serverName}" (${names.length ? `it declares ${names.join(', ')}` : 'it declares none'})`, ExitCode.failure);
  }
  if (server.transport !== 'http' || !server.url || !server.oauth) {
    throw new CliError(`server ${serverName} of ${worker.name} version ${version.version} does not authorize with oauth: there is nothing to connect`, ExitCode.failure);
  }
  const { credential, scopes, clientId } = server.oauth;
  return { label: `${worker.name}/${server.name} (${server.url})`, body: { url: server.url, oauth: { credential, scopes, ...(clientId ? { clientId } : {}) } } };
}

function instructionLines(target: ConnectTarget, begun: BeginAnswer): string[] {
  const client = begun.registered ? `client ${begun.clientId}, registered for this connection` : `client ${begun.clientId}`;
  return [
    `Open this URL in a browser to connect ${target.label} as credential ${begun.credential} (before ${begun.expiresAt}):`,
    `  ${begun.authorizationUrl}`,
    `authorization server ${begun.issuer}, ${client}`,
  ];
}

function expiryText(connection: Connection): string {
  return connection.expiresAt ? `expires ${connection.expiresAt}` : 'the server gave no expiry';
}

/** A connection of the credential made since `before` was read (each connection is a new version of the credential). */
function madeSince(items: readonly Connection[], credential: string, before: Connection | undefined): Connection | undefined {
  const found = items.find((item) => item.credential === credential);
  if (!found || found.state !== 'connected') return undefined;
  return !before || found.version !== before.version || found.connectedAt !== before.connectedAt ? found : undefined;
}

/** The API or the vault is briefly away: the next poll may get through. */
function isPassing(error: unknown): boolean {
  return error instanceof ConnectionError || (error instanceof ApiError && error.status >= 500);
}

/**
 * `packetagent mcp connect WORKER SERVER` (or `--url URL --credential NAME` for a server no
 * version declares yet): begins the OAuth connection, prints the URL the operator opens to
 * consent, and waits until the vault holds a new connection of the credential.
 */
export async function mcpConnect(context: CommandContext, io: McpConnectIo, workerRef: string | undefined, serverName: string | undefined, options: ConnectOptions): Promise<void> {
  const { client } = context;
  let target: ConnectTarget;
  if (options.url !== undefined) target = targetFromFlags(options, serverName);
  else {
    const flags = [options.credential !== undefined && '--credential', options.scope.length > 0 && '--scope', options.clientId !== undefined && '--client-id'].filter(Boolean);
    if (flags.length) throw new UsageError(`${flags.join(', ')} go with --url; without it the server's oauth is read from the worker's latest version`);
    if (!workerRef || !serverName) throw new UsageError('name the worker and its server (`mcp connect WORKER SERVER`), or give --url and --credential');
    target = await targetFromVersion(context, workerRef, serverName);
  }
  const credential = target.body.oauth.credential;
  const connectionsPath = client.workspacePath('mcp', 'connections');
  const before = options.wait ? (await client.get(connectionsPath, ConnectionListSchema)).items.find((item) => item.credential === credential) : undefined;
  const startedAt = io.now();
  const begun = await client.post(connectionsPath, { json: target.body }, BeginAnswerSchema);
  const instructions = instructionLines(target, begun);
  if (!options.wait) {
    context.report(instructions, begun);
    return;
  }

  const say = (lines: string[]) => {
    const text = `${lines.join('\n')}\n`;
    if (io.json) io.stderr(text);
    else io.stdout(text);
  };
  say([...instructions, `waiting up to ${options.timeout} s for the connection (Ctrl-C stops waiting; the link stays valid until it expires)...`]);
  const deadline = startedAt + options.timeout * 1000;
  while (io.now() < deadline) {
    await io.sleep(Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - io.now())));
    let items: Connection[];
    try {
      items = (await client.get(connectionsPath, ConnectionListSchema)).items;
    } catch (error) {
      if (isPassing(error)) continue;
      throw error;
    }
    const connection = madeSince(items, credential, before);
    if (connection) {
      context.report([`connected ${credential} (${expiryText(connection)})`], { ...begun, connection });
      return;
    }
  }
  throw new CliError(
    `no new connection of ${credential} after ${options.timeout} s: open the URL and consent, then run \`packetagent mcp connections\` to check, or run this command again for a new link`,
    ExitCode.failure,
  );
}

/** `packetagent mcp connections`: one row per OAuth connection of the workspace. */
export async function mcpConnections(context: CommandContext): Promise<void> {
  const { client } = context;
  const answer = await client.get(client.workspacePath('mcp', 'connections'), ConnectionListSchema);
  if (answer.items.length === 0) {
    context.report(['no OAuth connections'], answer);
    return;
  }
  const rows = [
    ['CREDENTIAL', 'STATE', 'RESOURCE', 'EXPIRES', 'REASON'],
    ...answer.items.map((item) => [item.credential, item.state, item.resource, item.expiresAt ?? '-', item.reason ?? '-']),
  ];
  const widths = rows[0]!.map((_cell, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
  context.report(lines, answer);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `mcp connect` needs the admin permission (it stores a credential); `mcp connections`, inspect. */
export function registerMcpConnectCommands(
  mcp: Command,
  deps: { context(command: Command): CommandContext; io(command: Command): McpConnectIo; positiveInteger(value: string): number },
): void {
  mcp
    .command('connect')
    .description(
      "Connect an MCP server that authorizes with OAuth: prints the URL to open in a browser, then waits until the vault holds the connection. The server's oauth is read from the worker's latest version; " +
        'for a server no version declares yet (a version is created only once its OAuth servers are connected), give --url and --credential instead.',
    )
    .argument('[worker]', 'worker name or id (not needed with --url)')
    .argument('[server]', 'the name of the MCP server in the definition')
    .option('--url <url>', "the MCP server's URL, for a server no version declares yet")
    .option('--credential <name>', 'with --url: the vault credential to keep the connection in')
    .option('--scope <scope>', 'with --url: a scope to ask for (repeatable; none asks for what the server advertises)', collect, [])
    .option('--client-id <id>', 'with --url: a client registered with the authorization server beforehand')
    .option('--no-wait', 'print the URL and return without waiting for the connection')
    .option('--timeout <seconds>', `how long to wait for the connection (default ${DEFAULT_TIMEOUT_SECONDS})`, deps.positiveInteger, DEFAULT_TIMEOUT_SECONDS)
    .action((workerRef: string | undefined, serverName: string | undefined, options: ConnectOptions, command: Command) =>
      mcpConnect(deps.context(command), deps.io(command), workerRef, serverName, options),
    );
  mcp
    .command('connections')
    .description("List the workspace's OAuth connections: credential, state (connected, or reconnect_required with the reason), resource and when the access token expires; never a token.")
    .action((_options: unknown, command: Command) => mcpConnections(deps.context(command)));
}
