import type { CommandBus } from '@packetagent/bus';
import { McpCommands, type McpCallResult } from '@packetagent/contracts';
import type { McpCallRequest, McpPort } from '@packetagent/tools';

/** Time past the server's own limit for the sandbox to answer that the call timed out. */
const ANSWER_MARGIN_MS = 15_000;

/** MCP calls through the sandbox service, which holds the run's sessions with its servers. */
export class BusMcp implements McpPort {
  constructor(private readonly commands: CommandBus) {}

  call(request: McpCallRequest, signal: AbortSignal): Promise<McpCallResult> {
    const answer = this.commands.request(McpCommands.call, request, { timeoutMs: (request.server.timeoutMs ?? 60_000) + ANSWER_MARGIN_MS });
    if (signal.aborted) return Promise.reject(signal.reason);
    // An abort stops waiting; the sandbox ends the call at its own limit, and the receipt says its outcome is not known.
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}
