import type { BlockedRequest, NavigationProblem, TrafficSession } from './checked-traffic';
import { BrowserGrants } from './browser-grants';

/** Refusals kept between two answers; a page that keeps retrying cannot grow the result without bound. */
export const MAX_BLOCKED_KEPT = 100;

/** What the interception of one run's context reads and writes: its grants and timeout of the latest action, and the refusals since. */
export class RunTraffic implements TrafficSession {
  grants = new BrowserGrants([]);
  requestTimeoutMs = 30_000;
  private readonly closing = new AbortController();
  private blocked: BlockedRequest[] = [];
  private readonly navigationProblems = new Map<string, NavigationProblem>();
  private navigationRedirect: string | null = null;

  get signal(): AbortSignal {
    return this.closing.signal;
  }

  record(blocked: BlockedRequest): void {
    if (this.blocked.length < MAX_BLOCKED_KEPT) this.blocked.push(blocked);
  }

  /** The refusals since the last call, which go into the action's answer. */
  drainBlocked(): BlockedRequest[] {
    const drained = this.blocked;
    this.blocked = [];
    return drained;
  }

  noteNavigationProblem(problem: NavigationProblem): void {
    this.navigationProblems.set(problem.url, problem);
  }

  /** Why the main frame's navigation to `url` failed, if the interception knows. */
  takeNavigationProblem(url: string): NavigationProblem | null {
    const problem = this.navigationProblems.get(url) ?? null;
    this.navigationProblems.clear();
    return problem;
  }

  noteNavigationRedirect(target: string): void {
    this.navigationRedirect = target;
  }

  /** Where the main frame's last aborted navigation was redirected to, once. */
  takeNavigationRedirect(): string | null {
    const target = this.navigationRedirect;
    this.navigationRedirect = null;
    return target;
  }

  close(): void {
    this.closing.abort(new Error('the run browser context closed'));
  }
}
