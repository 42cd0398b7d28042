import { AsyncLocalStorage } from 'node:async_hooks';
import type { McpCallError } from './mcp-call-error';

/**
 * One request to a server (initialize, a page of tools, a call) and the first reason it failed,
 * whoever saw it: the byte cap of its HTTP answer, a malformed event on its stream, its deadline,
 * the stdio process ending. Failing aborts the request, so the SDK stops waiting for it.
 */
export class CallGuard {
  private readonly controller = new AbortController();
  private reason: McpCallError | null = null;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get failure(): McpCallError | null {
    return this.reason;
  }

  fail(error: McpCallError): void {
    if (this.reason) return;
    this.reason = error;
    this.controller.abort(error);
  }
}

/**
 * The guard of the request whose work is running: the SDK sends a request and reads its answer
 * (the HTTP exchange, its event stream) within the async context the request was made in.
 */
export const currentGuard = new AsyncLocalStorage<CallGuard>();

/** Runs `request` under a guard that fails it with `timeout()` after `timeoutMs`. */
export async function guarded<T>(timeoutMs: number, timeout: () => McpCallError, request: (guard: CallGuard) => Promise<T>, each?: (guard: CallGuard) => () => void): Promise<T> {
  const guard = new CallGuard();
  const timer = setTimeout(() => guard.fail(timeout()), timeoutMs);
  const release = each?.(guard);
  try {
    return await currentGuard.run(guard, () => request(guard));
  } catch (error) {
    throw guard.failure ?? error;
  } finally {
    clearTimeout(timer);
    release?.();
  }
}
