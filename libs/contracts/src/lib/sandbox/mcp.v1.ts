import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { canonicalJson, type JsonValue } from '../json';
import { PayloadRefSchema } from '../payloads/payload-ref';
import { CredentialNameSchema } from '../vault/vault.events.v1';
import { ComputerNameSchema } from './computer.v1';

/**
 * MCP servers a worker's tools come from (Model Context Protocol, through the official SDK). The
 * sandbox service is the client: Streamable HTTP through the address-checked network client,
 * stdio servers inside the sandbox with no network. A version pins each server's tool list.
 */

export const McpServerNameSchema = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'lower-case letters, digits, _ and -, starting with a letter (at most 32)');
/** As servers name their tools; `/` and whitespace are not allowed, so `mcp:<server>/<tool>` reads back unambiguously. */
export const McpToolNameSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'letters, digits, _, . and - (at most 128)');

const limits = {
  /** One call's time limit, from the request's arrival to the result. */
  timeoutMs: z.number().int().min(100).max(600_000).default(60_000),
  /**
   * The largest result kept: larger ones are refused, not cut (a cut JSON result would mislead).
   * At most 32 MiB, the payload store's default limit, since the whole result is stored as one payload.
   */
  maxResultBytes: z.number().int().min(1024).max(32 * 1024 * 1024).default(4 * 1024 * 1024),
};

/**
 * OAuth 2.1 for a remote server: an operator connects it once (authorization code with PKCE,
 * the client registered dynamically where the authorization server offers it), and the vault
 * keeps the tokens as the credential named here, refreshing them before they expire. A call
 * only ever sees the access token, and only for the server the connection was made for.
 */
export const McpOAuthSchema = z.strictObject({
  /** The vault credential holding the connection (made by `packetagent mcp connect` or the console). */
  credential: CredentialNameSchema,
  /** Scopes asked for at connection; empty asks for what the server advertises. */
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/, 'an OAuth scope token (RFC 6749 section 3.3)')).max(32).default([]),
  /** A client registered with the authorization server beforehand, for one that offers no dynamic registration. */
  clientId: z.string().min(1).max(512).regex(/^[\x20-\x7e]+$/, 'printable ASCII').optional(),
});
export type McpOAuth = z.output<typeof McpOAuthSchema>;

/** The HTTP server's fields, for schemas that add to them; McpHttpServerSchema adds its rule. */
export const McpHttpServerFields = z.strictObject({
  name: McpServerNameSchema,
  transport: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }).max(2048),
  /** A vault credential sent as `Authorization: Bearer <value>`. */
  credential: CredentialNameSchema.optional(),
  oauth: McpOAuthSchema.optional(),
  /** Annotations (readOnlyHint, idempotentHint) loosen what policy assumes only for a trusted server. */
  trusted: z.boolean().default(false),
  ...limits,
});

export const oneWayToAuthenticate: [(server: { credential?: string | undefined; oauth?: unknown }) => boolean, { path: PropertyKey[]; message: string }] = [
  (server) => !(server.credential && server.oauth),
  { path: ['oauth'], message: 'a server takes either a static credential or oauth, not both' },
];

export const McpHttpServerSchema = McpHttpServerFields.refine(...oneWayToAuthenticate);

/** The credential a call to this server needs: its static bearer or its OAuth connection. */
export function mcpServerCredential(server: ParsedMcpServerSpec): string | undefined {
  return server.transport === 'http' ? (server.oauth?.credential ?? server.credential) : undefined;
}

export const McpStdioServerSchema = z.strictObject({
  name: McpServerNameSchema,
  transport: z.literal('stdio'),
  /**
   * A plain program name, started inside the sandbox with no network, or on `computer`'s PATH
   * (in its first root) over SSH, under that computer's policy.
   */
  command: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}$/, 'a plain program name (no path, no shell)'),
  args: z.array(z.string().max(4096)).max(64).default([]),
  /** A registered computer the server runs on instead of the sandbox; its tools' grants must name it under computers. */
  computer: ComputerNameSchema.optional(),
  trusted: z.boolean().default(false),
  ...limits,
});

export const McpServerSpecSchema = z.discriminatedUnion('transport', [McpHttpServerSchema, McpStdioServerSchema]);
export type McpServerSpec = z.input<typeof McpServerSpecSchema>;
export type ParsedMcpServerSpec = z.output<typeof McpServerSpecSchema>;

export const McpToolAnnotationsSchema = z.object({
  title: z.string().max(200).optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/** One tool as a version pins it. `digest` covers everything else, so a changed schema is a different tool. */
export const PinnedMcpToolSchema = z.object({
  name: McpToolNameSchema,
  description: z.string().max(8192),
  inputSchema: z.record(z.string(), z.json()),
  annotations: McpToolAnnotationsSchema,
  digest: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PinnedMcpTool = z.infer<typeof PinnedMcpToolSchema>;

/** SHA-256 of a tool's canonical name, description, input schema and annotations. */
export function mcpToolDigest(tool: Omit<PinnedMcpTool, 'digest'>): string {
  const canonical = canonicalJson({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema as JsonValue, annotations: tool.annotations as JsonValue });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** `mcp:<server>/<tool>`: how grants, policy, budgets (`count:mcp:<server>/<tool>`) and timelines name an MCP tool. */
export function mcpToolId(server: string, tool: string): string {
  return `mcp:${server}/${tool}`;
}

export function parseMcpToolId(id: string): { server: string; tool: string } | null {
  const match = /^mcp:([a-z][a-z0-9_-]{0,31})\/([A-Za-z0-9_.-]{1,128})$/.exec(id);
  return match ? { server: match[1]!, tool: match[2]! } : null;
}

const workspaceId = z.string().regex(Identifiers.workspace);
const runId = z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/);

export const McpListResultSchema = z.object({
  server: z.object({ name: z.string(), version: z.string() }),
  protocolVersion: z.string(),
  tools: z.array(PinnedMcpToolSchema),
  /** Tools the server listed that cannot be pinned (a name `mcp:<server>/<tool>` cannot carry, a description too long), with why. */
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
});
export type McpListResult = z.infer<typeof McpListResultSchema>;

/**
 * A result whose canonical JSON is at most this many bytes travels in the answer itself
 * (`value`); a larger one is stored and travels by reference (`result`).
 */
export const MCP_INLINE_RESULT_BYTES = 1024;

export const McpCallResultSchema = z.object({
  /** The server answered and did not flag the result as an error (`isError`). */
  ok: z.boolean(),
  /** The text content of the result, bounded, for the model and the timeline. */
  preview: z.string(),
  /** The whole result as the server sent it, by reference (verified on read), when its canonical JSON is over MCP_INLINE_RESULT_BYTES. */
  result: PayloadRefSchema.nullable(),
  /**
   * The whole result as the server sent it (its canonical JSON, parsed) when that is at most
   * MCP_INLINE_RESULT_BYTES; `result` is then null. Absent when there is no result, when it
   * travels by reference, and in the answers of sandboxes older than this field.
   */
  value: z.json().optional(),
  bytes: z.number().int().nonnegative(),
  /** Why the call did not produce a result: the code names the rule (timeout, protocol, schema...). */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  durationMs: z.number().int().nonnegative(),
});
export type McpCallResult = z.infer<typeof McpCallResultSchema>;

export const McpCommands = {
  /** Connects, initialises and lists the server's tools (every page), digested for pinning. */
  list: defineCommand(
    'sandbox.mcp.list',
    z.strictObject({ workspaceId, server: McpServerSpecSchema, bearer: z.string().min(1).max(16_384).optional() }),
    McpListResultSchema,
  ),
  /**
   * Calls one pinned tool in the run's session with the server (opened on first use, closed with
   * the run). The tool must still be listed with the pinned digest, else `mcp_tool_changed`.
   */
  call: defineCommand(
    'sandbox.mcp.call',
    z.strictObject({
      workspaceId,
      runId,
      /** The call's idempotency key (`<runId>:<callId>`): a repeat answers the first result. */
      callKey: z.string().min(1).max(420),
      server: McpServerSpecSchema,
      tool: PinnedMcpToolSchema,
      arguments: z.record(z.string(), z.json()),
      bearer: z.string().min(1).max(16_384).optional(),
      /** Policy's grant for the key of the computer a stdio server runs on; the session that starts it redeems it. */
      computerGrant: z.string().min(1).max(4_096).optional(),
    }),
    McpCallResultSchema,
  ),
  /** Ends the run's sessions (the run ended, stopped or moved). */
  close: defineCommand('sandbox.mcp.close', z.strictObject({ workspaceId, runId }), z.object({ closed: z.number().int().nonnegative() })),
} as const;

/** One call as the sandbox takes it: the server and tool exactly as the run's version pinned them. */
export type McpCallRequest = z.output<typeof McpCommands.call.request>;

export const McpErrorCodes = {
  /** The server could not be reached or started. */
  unavailable: 'mcp_unavailable',
  /** The server broke the protocol: invalid JSON-RPC, an answer of the wrong shape. */
  protocol: 'mcp_protocol_error',
  /** The server no longer lists the tool with the schema the version pinned. */
  toolChanged: 'mcp_tool_changed',
  timeout: 'mcp_timeout',
  resultTooLarge: 'mcp_result_too_large',
  /** The arguments do not match the pinned input schema. */
  invalidArguments: 'mcp_invalid_arguments',
  /** The server ran the tool and flagged its result as an error (`isError: true`); the message is its text. */
  toolError: 'mcp_tool_error',
} as const;
