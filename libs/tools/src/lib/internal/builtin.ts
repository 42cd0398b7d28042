import type { JsonObject, JsonValue } from '@packetagent/contracts';
import { oneLine } from './text';
import type { AbandonContext, HostResolver, McpPort, OperationDescriptor, SandboxPort, ToolContext, ToolOutcome, ToolsConfig } from '../tool.types';

/** What handlers get besides their arguments and the call's context. */
export interface ToolEnvironment {
  config: ToolsConfig;
  resolveHost: HostResolver;
  sandbox: SandboxPort | null;
  mcp?: McpPort | null;
}

/**
 * A descriptor with its handler. Handlers stay inside the library: the registry, which checks
 * the authorization first, is the only way to run one.
 */
export interface BuiltinTool<Args> {
  descriptor: OperationDescriptor<Args>;
  /** Absent for control tools, which the supervisor interprets. */
  execute?(args: Args, ctx: ToolContext, env: ToolEnvironment): Promise<ToolOutcome>;
  /** Stops what a call whose outcome was lost may still be doing; absent when nothing outlives the caller. */
  abandon?(args: Args, ctx: AbandonContext, env: ToolEnvironment): Promise<void>;
}

/** A failed outcome; the model sees the code and message, and any details the handler adds. */
export function failure(code: string, message: string, details: JsonValue = null): ToolOutcome {
  const output: JsonObject = { error: { code, message } };
  if (details !== null) output['details'] = details;
  return { ok: false, output, summary: `${code}: ${oneLine(message)}`, error: { code, message } };
}
