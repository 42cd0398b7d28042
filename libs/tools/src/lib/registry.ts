import { canonicalJson, isKnownTool, mcpServerCredential, sha256Hex, TOOL_NAMES, type JsonValue, type ToolName } from '@packetagent/contracts';
import { toolsConfig } from './config';
import { BUILTIN_TOOLS } from './builtins';
import { ToolAbortedError, ToolArgumentsError, ToolFailure, ToolNotAuthorizedError } from './errors';
import { failure, type BuiltinTool, type ToolEnvironment } from './internal/builtin';
import { issuesOf } from './internal/schema';
import { MODEL_TEXT_LIMIT, truncateText } from './internal/text';
import { systemResolver } from './net/destination';
import { McpCatalogue, type CatalogueEntry } from './mcp/mcp-catalogue';
import type { AbandonContext, CallAuthorization, HostResolver, McpPort, OperationDescriptor, PlannedCall, SandboxPort, ToolContext, ToolOutcome, ToolsConfig, ToolSpec } from './tool.types';

export interface ToolRegistryOptions {
  /** Missing settings take their defaults (see ToolsConfigSchema). */
  config?: Partial<ToolsConfig>;
  /** Resolves host names for the network tools; the system resolver when absent (tests inject one). */
  resolveHost?: HostResolver;
  /** Where run_command and browser run; without it both answer sandbox_unavailable. */
  sandbox?: SandboxPort;
  /** Where MCP tools are called; without it the mcp tool answers mcp_unavailable. */
  mcp?: McpPort;
}

/** Largest output (as JSON text) an outcome hands back, whatever a handler produced. */
const OUTCOME_OUTPUT_LIMIT = 2 * MODEL_TEXT_LIMIT;

/** Secrets shorter than this are not searched for in outcomes: they would match ordinary text. */
const SCRUB_MIN_LENGTH = 6;

function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

function scrubJson(value: JsonValue, secrets: readonly string[]): JsonValue {
  if (typeof value === 'string') return scrubText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubJson(item, secrets));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [scrubText(key, secrets), scrubJson(item, secrets)]));
  return value;
}

/** Every form in which a credential value could come back: as given, and as sent in Basic auth. */
function secretForms(credentials: Readonly<Record<string, string>>): string[] {
  const forms = new Set<string>();
  for (const value of Object.values(credentials)) {
    if (value.length < SCRUB_MIN_LENGTH) continue;
    forms.add(value);
    forms.add(Buffer.from(value, 'utf8').toString('base64'));
    forms.add(Buffer.from(`x-access-token:${value}`, 'utf8').toString('base64'));
    forms.add(encodeURIComponent(value));
  }
  // Longest first, so a secret containing another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

function boundOutput(output: JsonValue): JsonValue {
  const text = canonicalJson(output);
  if (text.length <= OUTCOME_OUTPUT_LIMIT) return output;
  return { truncatedOutput: truncateText(text, OUTCOME_OUTPUT_LIMIT).text, truncated: true };
}

/**
 * The only way to run a tool: describe tools to the model, plan a call from the model's
 * arguments (validated, with its verb, resource and digest for policy), and execute it with an
 * allow decision for exactly that call.
 */
export class ToolRegistry {
  private readonly environment: ToolEnvironment;

  constructor(options: ToolRegistryOptions = {}) {
    this.environment = { config: toolsConfig(options.config), resolveHost: options.resolveHost ?? systemResolver, sandbox: options.sandbox ?? null, mcp: options.mcp ?? null };
  }

  get config(): ToolsConfig {
    return this.environment.config;
  }

  /** The policy-facing descriptor of a tool (its handler is not part of it). */
  descriptor(name: ToolName): OperationDescriptor<unknown> {
    return this.builtin(name).descriptor;
  }

  /**
   * Tools as the model is shown them, in the order asked; `mcp` stands for the run's MCP tools,
   * each shown under its own name with its pinned description and input schema.
   */
  describe(tools: readonly ToolName[], mcp: McpCatalogue = McpCatalogue.empty()): Array<ToolSpec> {
    const specs: ToolSpec[] = [];
    let mcpShown = false;
    for (const name of tools) {
      if (name === 'mcp') {
        if (!mcpShown) specs.push(...mcp.specs());
        mcpShown = true;
        continue;
      }
      const { description, parameters } = this.builtin(name).descriptor;
      specs.push({ name, description, parameters });
    }
    return specs;
  }

  /**
   * Validates the model's call and derives everything policy, budget and the effect log need.
   * Throws ToolArgumentsError (each issue with its path) for an unknown tool or bad arguments.
   */
  plan(callId: string, name: string, rawArgs: unknown, mcp?: McpCatalogue): PlannedCall {
    const entry = mcp?.byFunctionName(name);
    if (entry) return this.planMcp(callId, entry, { server: entry.server.name, tool: entry.tool.name, arguments: rawArgs ?? {} });
    if (name === 'mcp' && mcp) {
      const wanted = rawArgs as { server?: unknown; tool?: unknown } | null;
      const named = typeof wanted?.server === 'string' && typeof wanted.tool === 'string' ? mcp.find(wanted.server, wanted.tool) : undefined;
      if (!named) throw new ToolArgumentsError(name, [{ path: '(tool)', message: "not a tool this run's version pinned from its MCP servers: call MCP tools by their own names" }]);
      return this.planMcp(callId, named, rawArgs);
    }
    if (!isKnownTool(name)) {
      if (mcp && mcp.size > 0 && name.includes('__')) throw new ToolArgumentsError(name, [{ path: '(tool)', message: `"${name}" is not a tool this run's version pinned from its MCP servers` }]);
      throw new ToolArgumentsError(name, [{ path: '(tool)', message: `unknown tool "${name}"; known tools: ${TOOL_NAMES.join(', ')}` }]);
    }
    const { descriptor } = this.builtin(name);
    const parsed = descriptor.argsSchema.safeParse(rawArgs);
    if (!parsed.success) throw new ToolArgumentsError(name, issuesOf(parsed.error));
    const args = parsed.data;
    const verb = descriptor.verb(args);
    const resource = descriptor.resource(args);
    const redactedArgs = descriptor.redact(args);
    return {
      callId,
      tool: name,
      verb,
      resource,
      mutating: descriptor.mutating(args, this.environment.config),
      idempotentByKey: descriptor.idempotentByKey(args, this.environment.config),
      credentials: descriptor.credentials(args),
      computer: descriptor.target?.(args) ?? null,
      args,
      redactedArgs,
      callDigest: sha256Hex(canonicalJson({ tool: name, verb, resource, redactedArgs })),
      control: descriptor.control === true,
    };
  }

  /** An MCP call: what the mcp builtin plans, with the server's credential and what its trust lets policy assume. */
  private planMcp(callId: string, entry: CatalogueEntry, args: unknown): PlannedCall {
    const planned = this.plan(callId, 'mcp', args);
    const credential = mcpServerCredential(entry.server);
    if (entry.server.transport === 'stdio') return { ...planned, ...McpCatalogue.effects(entry), credentials: [], computer: entry.server.computer ?? null };
    if (!credential) return { ...planned, ...McpCatalogue.effects(entry), credentials: [] };
    return { ...planned, ...McpCatalogue.effects(entry), credentials: [credential], audiences: { [credential]: entry.server.url } };
  }

  /**
   * Runs a planned call that policy allowed. Refuses (ToolNotAuthorizedError) anything but an
   * allow for this very call, and control tools. Failures of the tool come back as
   * `{ok: false, error}`; an abort through ctx.signal throws ToolAbortedError.
   */
  async execute(planned: PlannedCall, authorization: CallAuthorization, ctx: ToolContext): Promise<ToolOutcome> {
    if (!isKnownTool(planned.tool)) throw new ToolNotAuthorizedError(`unknown tool "${String(planned.tool)}"`);
    const builtin = this.builtin(planned.tool);
    if (planned.control || builtin.descriptor.control || !builtin.execute) {
      throw new ToolNotAuthorizedError(`${planned.tool} is a control tool: the supervisor interprets it, the registry never executes it`);
    }
    if (authorization.decision !== 'allow') throw new ToolNotAuthorizedError(`policy answered ${authorization.decision} for this call`);
    const mismatch = (['tool', 'verb', 'resource', 'callDigest'] as const).filter((field) => authorization[field] !== planned[field]);
    if (mismatch.length > 0) throw new ToolNotAuthorizedError(`the authorization is for another call (${mismatch.join(', ')} differ)`);
    // The call is derived again from its arguments, so a PlannedCall altered after planning
    // cannot run under the digest another call was allowed with.
    let replanned: PlannedCall;
    try {
      // An MCP call is derived with the run's catalogue, which says where its server runs.
      replanned = this.plan(planned.callId, planned.tool, planned.args, planned.tool === 'mcp' ? ctx.mcp : undefined);
    } catch (error) {
      throw new ToolNotAuthorizedError('the planned call no longer matches its arguments', { cause: error });
    }
    if (replanned.callDigest !== planned.callDigest || replanned.verb !== planned.verb || replanned.resource !== planned.resource || replanned.computer !== planned.computer) {
      throw new ToolNotAuthorizedError('the planned call no longer matches its arguments');
    }
    if (ctx.signal.aborted) throw new ToolAbortedError(`${planned.tool} call ${planned.callId} was aborted before it started`, { cause: ctx.signal.reason });

    const secrets = secretForms(ctx.credentials);
    let outcome: ToolOutcome;
    try {
      outcome = await builtin.execute(replanned.args, ctx, this.environment);
    } catch (error) {
      if (ctx.signal.aborted) throw new ToolAbortedError(`${planned.tool} call ${planned.callId} was aborted`, { cause: ctx.signal.reason });
      if (error instanceof ToolFailure) outcome = failure(error.code, error.message, error.output);
      else outcome = failure('tool_failed', `${planned.tool} failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
    }
    return {
      ok: outcome.ok,
      output: boundOutput(scrubJson(outcome.output, secrets)),
      summary: scrubText(outcome.summary, secrets),
      ...(outcome.error ? { error: { code: outcome.error.code, message: scrubText(outcome.error.message, secrets) } } : {}),
      ...(outcome.lost ? { lost: { cause: outcome.lost.cause, detail: scrubText(outcome.lost.detail, secrets) } } : {}),
    };
  }

  /**
   * Stops what a planned call whose outcome was lost may still be doing (its command, for
   * run_command). Nothing for tools whose work ends with their caller.
   */
  async abandon(planned: PlannedCall, ctx: AbandonContext): Promise<void> {
    if (!isKnownTool(planned.tool)) return;
    await this.builtin(planned.tool).abandon?.(planned.args, ctx, this.environment);
  }

  private builtin(name: ToolName): BuiltinTool<unknown> {
    return BUILTIN_TOOLS[name];
  }
}
