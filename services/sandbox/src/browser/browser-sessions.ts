import type { BrowserActResult } from '@packetagent/contracts';
import type { PayloadStore } from '@packetagent/eventstore';
import type { HostResolver } from '@packetagent/tools';
import type { Browser } from 'playwright-core';
import { BrowserActionError, BrowserActionErrorCodes, BrowserUnavailableError } from './browser-errors';
import { BrowserGrants } from './browser-grants';
import { browserOptions, type BrowserOptions } from './browser-options';
import { chromiumAvailability, launchChromium } from './chromium-launcher';
import { performAction, withinDeadline, type ActionOutcome, type ParsedBrowserActRequest } from './page-actions';
import { RunContext } from './run-context';

export interface BrowserSessionsDeps {
  /** Where screenshots are stored. */
  payloads: PayloadStore;
  options?: BrowserOptions;
  /** Resolves the hosts the pages request; the system resolver when absent. */
  resolveHost?: HostResolver;
  /** Starts Chromium; tests wrap it to watch or end the process. */
  launch?: (chromiumPath: string) => Promise<Browser>;
}

export interface RunBrowserKey {
  workspaceId: string;
  runId: string;
}

const TITLE_TIMEOUT_MS = 2_000;

function keyOf({ workspaceId, runId }: RunBrowserKey): string {
  return `${workspaceId}/${runId}`;
}

function failure(url: string, error: { code: string; message: string }, blocked: BrowserActResult['blocked'] = []): BrowserActResult {
  return { ok: false, url, title: '', status: null, text: null, screenshot: null, screenshotSha256: null, blocked, error: { code: error.code, message: error.message } };
}

/**
 * The per-run browsers of this replica: one Chromium process (started on first use, started
 * again after it went away), one context per run, closed by close(), closeAll() or after being
 * idle for options.idleTimeoutMs.
 */
export class BrowserSessions {
  private readonly options: BrowserOptions;
  private readonly launch: (chromiumPath: string) => Promise<Browser>;
  private browser: Promise<Browser> | null = null;
  private readonly runs = new Map<string, Promise<RunContext>>();

  constructor(private readonly deps: BrowserSessionsDeps) {
    this.options = deps.options ?? browserOptions();
    this.launch = deps.launch ?? launchChromium;
  }

  /** Contexts open now. */
  get openRuns(): number {
    return this.runs.size;
  }

  /** Whether this replica has the run's context open. */
  has(key: RunBrowserKey): boolean {
    return this.runs.has(keyOf(key));
  }

  async availability(): Promise<{ available: boolean; detail: string }> {
    return chromiumAvailability(this.options.chromiumPath);
  }

  /** Carries out one action on the run's page; a page-level failure is answered with `ok: false`, never thrown. */
  async act(request: ParsedBrowserActRequest): Promise<BrowserActResult> {
    let run: RunContext;
    try {
      run = await this.runFor(request);
    } catch (error) {
      if (error instanceof BrowserUnavailableError) return failure('', error);
      throw error;
    }
    return run.serialise(() => this.perform(run, request));
  }

  /** Closes the run's context, and with it its cookies and storage; `closed: false` when it had none. */
  async close(key: RunBrowserKey): Promise<{ closed: boolean }> {
    const run = this.runs.get(keyOf(key));
    if (!run) return { closed: false };
    this.runs.delete(keyOf(key));
    await run.then((opened) => opened.close(), () => undefined);
    return { closed: true };
  }

  /** Closes every context and Chromium itself (on shutdown). */
  async closeAll(): Promise<void> {
    const runs = [...this.runs.values()];
    this.runs.clear();
    await Promise.all(runs.map((run) => run.then((opened) => opened.close(), () => undefined)));
    const browser = this.browser;
    this.browser = null;
    await browser?.then((opened) => opened.close(), () => undefined);
  }

  private async perform(run: RunContext, request: ParsedBrowserActRequest): Promise<BrowserActResult> {
    clearTimeout(run.idleTimer);
    run.traffic.grants = new BrowserGrants(request.allowedUrls);
    run.traffic.requestTimeoutMs = request.timeoutMs;
    let outcome: ActionOutcome | null = null;
    let problem: { code: string; message: string } | null = null;
    try {
      outcome = await performAction({ page: run.page, traffic: run.traffic, payloads: this.deps.payloads, maxTextBytes: this.options.maxTextBytes }, request);
    } catch (error) {
      if (error instanceof BrowserActionError) problem = error;
      else if (run.isClosed) problem = { code: BrowserActionErrorCodes.actionFailed, message: 'the run browser closed during the action' };
      else throw error;
    } finally {
      this.armIdleTimer(run, request);
    }
    const url = run.isClosed ? '' : run.page.url();
    const title = run.isClosed ? '' : await withinDeadline(run.page.title(), TITLE_TIMEOUT_MS, 'the title').catch(() => '');
    const blocked = run.traffic.drainBlocked();
    if (problem) return { ...failure(url, problem, blocked), title };
    return { ok: true, url, title, ...outcome!, blocked, error: null };
  }

  private armIdleTimer(run: RunContext, key: RunBrowserKey): void {
    clearTimeout(run.idleTimer);
    run.idleTimer = setTimeout(async () => {
      if (run.busy) return;
      const current = this.runs.get(keyOf(key));
      const mine = current !== undefined && (await current.catch(() => null)) === run;
      if (mine && this.runs.get(keyOf(key)) === current) this.runs.delete(keyOf(key));
      await run.close();
    }, this.options.idleTimeoutMs);
    run.idleTimer.unref();
  }

  private async runFor(key: RunBrowserKey): Promise<RunContext> {
    const existing = this.runs.get(keyOf(key));
    if (existing) {
      const run = await existing.catch(() => null);
      if (run && !run.isClosed) return run;
      if (this.runs.get(keyOf(key)) === existing) this.runs.delete(keyOf(key));
      return this.runFor(key);
    }
    const opening = this.openRun();
    this.runs.set(keyOf(key), opening);
    opening.catch(() => {
      if (this.runs.get(keyOf(key)) === opening) this.runs.delete(keyOf(key));
    });
    return opening;
  }

  private async openRun(): Promise<RunContext> {
    const browser = await this.browserProcess();
    return RunContext.open(browser, this.options, { allowPrivate: this.options.allowPrivate, maxResponseBytes: this.options.maxResponseBytes, resolveHost: this.deps.resolveHost });
  }

  private browserProcess(): Promise<Browser> {
    if (this.browser) return this.browser;
    const launching = this.launch(this.options.chromiumPath);
    this.browser = launching;
    const forget = () => {
      if (this.browser === launching) this.browser = null;
    };
    launching.then((browser) => browser.on('disconnected', forget), forget);
    return launching;
  }
}
