import { redactResource } from '@packetagent/contracts';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { BrowserOptions } from './browser-options';
import { CheckedTraffic, type TrafficRules } from './checked-traffic';
import { RunTraffic } from './run-traffic';

/**
 * One run's browser: a fresh context (its own cookies, storage and cache) with one page, every
 * request of which goes through the checks. Actions on it run one at a time.
 */
export class RunContext {
  readonly traffic = new RunTraffic();
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;
  private closed = false;
  idleTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly context: BrowserContext,
    private currentPage: Page | null,
  ) {}

  static async open(browser: Browser, options: Pick<BrowserOptions, 'viewport'>, rules: TrafficRules): Promise<RunContext> {
    const context = await browser.newContext({ acceptDownloads: false, serviceWorkers: 'block', viewport: options.viewport });
    const run = new RunContext(context, null);
    context.on('close', () => run.markClosed());
    await new CheckedTraffic(context, run.traffic, rules).install();
    context.on('page', (page) => run.refusePopup(page));
    run.currentPage = await context.newPage();
    // A crashed page cannot be used again; the run's next action opens a fresh context.
    run.currentPage.on('crash', () => void run.close());
    return run;
  }

  get page(): Page {
    return this.currentPage!;
  }

  /** Closed by close(), by its browser going away, or after its page crashed. */
  get isClosed(): boolean {
    return this.closed || this.page.isClosed();
  }

  get busy(): boolean {
    return this.pending > 0;
  }

  /** Runs `work` after every action queued before it. */
  serialise<T>(work: () => Promise<T>): Promise<T> {
    this.pending++;
    const next = this.queue.then(work).finally(() => this.pending--);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    this.markClosed();
    await this.context.close().catch(() => undefined);
  }

  private markClosed(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.traffic.close();
  }

  private refusePopup(page: Page): void {
    if (this.currentPage === null || page === this.currentPage) return;
    this.traffic.record({ url: redactResource(page.url() || 'about:blank'), reason: 'pop-up windows are not opened: the run has one page', resourceType: 'popup' });
    page.close().catch(() => undefined);
  }
}
