import type { BrowserActRequest, BrowserActResult, ExecRequest, ExecResult, JsonObject, JsonValue, McpCallRequest, McpCallResult, ToolName } from '@packetagent/contracts';
import type { McpCatalogue } from './mcp/mcp-catalogue';
import type { z } from 'zod';

/**
 * Everything policy, budget and the effect log need to know about one operation of a tool,
 * derived from the call's validated arguments before anything runs.
 */
export interface OperationDescriptor<Args = unknown> {
  tool: ToolName;
  /** Shown to the model. */
  description: string;
  /** JSON Schema of the arguments, shown to the model. */
  parameters: JsonObject;
  /** Validates the model's arguments; its issues are sent back to the model as a correction. */
  argsSchema: z.ZodType<Args>;
  /** The verb policy checks (`GET`, `write`, `post`...); empty for control tools. */
  verb(args: Args): string;
  /** The resource policy checks, in the grant's terms (URL, workspace path, address...). */
  resource(args: Args): string | null;
  /** Whether the call changes state somewhere: mutating calls get effect receipts. */
  mutating(args: Args, config: ToolsConfig): boolean;
  /**
   * Whether repeating the call with the same idempotency key is safe (the key is sent, so the
   * far side applies it once). Only such calls are retried after an uncertain outcome.
   */
  idempotentByKey(args: Args, config: ToolsConfig): boolean;
  /** Credential names the call needs, resolved through single-use grants. */
  credentials(args: Args): string[];
  /** The registered computer the call runs on (policy composes its policy); null or absent for the local sandbox. */
  target?(args: Args): string | null;
  /** The arguments with secrets and bulky content cut, for events and approvals. */
  redact(args: Args): JsonValue;
  /** Control tools are interpreted by the supervisor, never executed by the registry. */
  control?: boolean;
}

/** A call validated against its descriptor, ready to be authorised. */
export interface PlannedCall {
  callId: string;
  tool: ToolName;
  verb: string;
  resource: string | null;
  mutating: boolean;
  idempotentByKey: boolean;
  credentials: string[];
  /**
   * The URL each credential is for, where the vault must check it: an OAuth connection hands
   * out its token only for the resource it was made for (an MCP server's URL).
   */
  audiences?: Record<string, string>;
  /** The registered computer the call runs on; null for the local sandbox. */
  computer: string | null;
  args: unknown;
  redactedArgs: JsonValue;
  /** SHA-256 of the canonical redacted call: what an approve-once covers. */
  callDigest: string;
  control: boolean;
}

/** The allow answer of policy for exactly this call; the registry refuses anything else. */
export interface CallAuthorization {
  decision: 'allow' | 'deny' | 'approval_required';
  tool: string;
  verb: string;
  resource: string | null;
  callDigest: string;
}

export interface ToolsConfig {
  /** `host:port` pairs http_fetch may reach although they resolve to private addresses. */
  httpAllowPrivate: string[];
  /** Origins known to honour the Idempotency-Key header, making their POST/PATCH idempotent by key. */
  httpIdempotencyKeyOrigins: string[];
  httpMaxResponseBytes: number;
  httpTimeoutMs: number;
  /** Where Slack incoming webhooks are posted (tests point it at a local server). */
  slackWebhookBaseUrl?: string;
  /** GitHub REST base URL (tests point it at a local server). */
  githubBaseUrl: string;
  /** Milliseconds one git operation may take (clone and push included); 120 000 when absent. */
  gitTimeoutMs?: number;
}

export interface ToolContext {
  workspaceId: string;
  runId: string;
  /** The run's own directory: every path of the files and git tools stays inside it. */
  workDir: string;
  /** Sent with mutating calls (e.g. the Idempotency-Key header). */
  idempotencyKey: string;
  /** Credential values by name, resolved for this call only. */
  credentials: Readonly<Record<string, string>>;
  signal: AbortSignal;
  /** URL patterns the run's browser grants name: every request of its pages must match one. */
  browserUrls?: readonly string[];
  /** Policy's single-use grant for the key of the computer the call runs on, when it names one. */
  computerGrant?: string;
  /** The run's MCP tools (its version's pinned tools that its grants cover). */
  mcp?: McpCatalogue;
}

/** Which call is given up: the run and the call's idempotency key. */
export interface AbandonContext {
  workspaceId: string;
  runId: string;
  idempotencyKey: string;
}

/**
 * The sandbox service as the tools see it: run_command and browser run there, never in the
 * caller's process. Absent, both tools fail closed with `sandbox_unavailable`.
 */
export interface SandboxPort {
  /** Runs the command to its end; an abort of `signal` cancels it (its process tree is killed). */
  exec(request: ExecRequest, signal: AbortSignal): Promise<ExecResult>;
  /** Kills the exec's process tree wherever it runs; false when no replica runs it. */
  cancel(workspaceId: string, execId: string): Promise<boolean>;
  browse(request: BrowserActRequest, signal: AbortSignal): Promise<BrowserActResult>;
}


export type { McpCallRequest };

/** The run's MCP sessions (the sandbox service is the client). Absent, the mcp tool fails closed with `mcp_unavailable`. */
export interface McpPort {
  call(request: McpCallRequest, signal: AbortSignal): Promise<McpCallResult>;
}

export interface ToolOutcome {
  ok: boolean;
  /** What the model sees (bounded in size). */
  output: JsonValue;
  /** One line for timelines and logs; never a secret. */
  summary: string;
  error?: { code: string; message: string };
  /**
   * The call's outcome is not known: the link to the computer it ran on broke while it ran. It
   * is not a failure the far side reported, and never a success; the caller decides what follows.
   */
  lost?: { cause: 'transport_lost'; detail: string };
}

/** A tool as the model is shown it: structurally the same as the providers' ToolSpec. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonObject;
}

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (A and AAAA), like `dns.lookup(host, {all: true})`. */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;
