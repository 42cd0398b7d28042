import type { ToolOutcome } from '../tool.types';
import { failure } from '../internal/builtin';

/** A refusal or absence of the sandbox as the model sees it: the code, and every issue it named. */
export function sandboxFailure(error: unknown): ToolOutcome {
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'sandbox_failed';
  const message = error instanceof Error ? error.message : String(error);
  const issues = (error as { issues?: unknown }).issues;
  const unavailable = code === 'command_unavailable' || code === 'command_timeout';
  return failure(unavailable ? 'sandbox_unavailable' : code, unavailable ? `the sandbox service did not answer: ${message}` : message, Array.isArray(issues) ? (issues as never) : null);
}
