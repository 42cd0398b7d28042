import type { CommandBus } from '@packetagent/bus';
import { SandboxCommands, type BrowserActRequest, type BrowserActResult, type ExecRequest, type ExecResult } from '@packetagent/contracts';
import type { SandboxPort } from '@packetagent/tools';

/** Beyond the command's own wall time: for the sandbox to store the output and answer. */
const ANSWER_MARGIN_MS = 60_000;
const DEFAULT_WALL_TIME_MS = 10 * 60_000;
const CANCEL_TIMEOUT_MS = 5_000;

/** The sandbox service over the bus. An abort cancels the command there, so its process tree dies with the call. */
export class BusSandbox implements SandboxPort {
  constructor(private readonly commands: CommandBus) {}

  async exec(request: ExecRequest, signal: AbortSignal): Promise<ExecResult> {
    const wallTimeMs = request.limits?.wallTimeMs ?? DEFAULT_WALL_TIME_MS;
    return this.cancellable(this.commands.request(SandboxCommands.exec, request, { timeoutMs: wallTimeMs + ANSWER_MARGIN_MS }), signal, () =>
      this.commands.request(SandboxCommands.cancel, { workspaceId: request.workspaceId, execId: request.execId, actor: { kind: 'service', id: 'supervisor' } }, { timeoutMs: CANCEL_TIMEOUT_MS }),
    );
  }

  async cancel(workspaceId: string, execId: string): Promise<boolean> {
    const answer = await this.commands.request(SandboxCommands.cancel, { workspaceId, execId, actor: { kind: 'service', id: 'supervisor' } }, { timeoutMs: CANCEL_TIMEOUT_MS });
    return answer.found;
  }

  async browse(request: BrowserActRequest, signal: AbortSignal): Promise<BrowserActResult> {
    const timeoutMs = (request.timeoutMs ?? 30_000) + ANSWER_MARGIN_MS;
    return this.cancellable(this.commands.request(SandboxCommands.browserAct, request, { timeoutMs }), signal, () =>
      this.commands.request(SandboxCommands.browserClose, { workspaceId: request.workspaceId, runId: request.runId }, { timeoutMs: CANCEL_TIMEOUT_MS }),
    );
  }

  /** The answer, or on abort: the far side is told to stop, and the abort's reason is thrown. */
  private cancellable<T>(answer: Promise<T>, signal: AbortSignal, stop: () => Promise<unknown>): Promise<T> {
    if (signal.aborted) {
      void stop().catch(() => undefined);
      return Promise.reject(signal.reason);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        void stop().catch(() => undefined);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}
