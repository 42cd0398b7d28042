import { createHash } from 'node:crypto';
import { redactResource, type BrowserActRequestSchema, type PayloadRef } from '@packetagent/contracts';
import type { PayloadStore } from '@packetagent/eventstore';
import { errors, type Page, type Response } from 'playwright-core';
import type { z } from 'zod';
import { BrowserActionError, BrowserActionErrorCodes } from './browser-errors';
import type { RunTraffic } from './run-traffic';

export type ParsedBrowserActRequest = z.output<typeof BrowserActRequestSchema>;

export interface ActionOutcome {
  status: number | null;
  text: string | null;
  screenshot: PayloadRef | null;
  screenshotSha256: string | null;
}

export interface ActionTarget {
  page: Page;
  traffic: RunTraffic;
  payloads: PayloadStore;
  maxTextBytes: number;
}

/** Evaluated in the page (this project compiles without the DOM library): the text a reader sees. */
const PAGE_TEXT = "document.body ? document.body.innerText : (document.documentElement ? document.documentElement.textContent || '' : '')";

const NOTHING: ActionOutcome = { status: null, text: null, screenshot: null, screenshotSha256: null };

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

/** The longest start of `text` that fits in `maxBytes` of UTF-8, never splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

/** `work`, or a timeout error once `ms` have passed: page scripts can keep an evaluation waiting forever. */
export function withinDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new BrowserActionError(BrowserActionErrorCodes.timeout, `${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** One action on the run's page; a page-level failure is thrown as a BrowserActionError. */
class PageAction {
  private readonly deadlineAt: number;

  constructor(
    private readonly target: ActionTarget,
    private readonly request: ParsedBrowserActRequest,
  ) {
    this.deadlineAt = Date.now() + request.timeoutMs;
  }

  private get page(): Page {
    return this.target.page;
  }

  private remaining(): number {
    return Math.max(1, this.deadlineAt - Date.now());
  }

  async perform(): Promise<ActionOutcome> {
    switch (this.request.action) {
      case 'navigate':
        return { ...NOTHING, status: await this.navigate(this.request.url) };
      case 'read':
        return this.read();
      case 'click':
        return this.click();
      case 'type':
        return this.type();
      case 'screenshot':
        return this.screenshot();
    }
  }

  private async navigate(url: string): Promise<number | null> {
    const refusal = this.target.traffic.grants.refusal(url);
    if (refusal) {
      this.target.traffic.record({ url: redactResource(url), reason: refusal, resourceType: 'document' });
      throw new BrowserActionError(BrowserActionErrorCodes.navigationRefused, `${redactResource(url)}: ${refusal}`);
    }
    this.target.traffic.takeNavigationRedirect();
    return this.settle(url);
  }

  private goto(url: string): Promise<Response | null> {
    return this.page.goto(url, { waitUntil: 'load', timeout: this.remaining() });
  }

  /** Navigates to `first` and waits for the page to load, navigating on to the target of each redirect a hop was aborted for. */
  private async settle(first: string): Promise<number | null> {
    let url = first;
    for (;;) {
      try {
        const response = await withinDeadline(this.goto(url), this.remaining(), 'the navigation');
        return response?.status() ?? null;
      } catch (error) {
        const redirect = this.target.traffic.takeNavigationRedirect();
        if (redirect) {
          url = redirect;
          continue;
        }
        const problem = this.target.traffic.takeNavigationProblem(new URL(url).href);
        if (problem?.refused) throw new BrowserActionError(BrowserActionErrorCodes.navigationRefused, problem.message, { cause: error });
        if (error instanceof errors.TimeoutError || (error instanceof BrowserActionError && error.code === BrowserActionErrorCodes.timeout)) {
          throw new BrowserActionError(BrowserActionErrorCodes.timeout, `the page did not load within ${this.request.timeoutMs} ms`, { cause: error });
        }
        throw new BrowserActionError(BrowserActionErrorCodes.navigationFailed, problem?.message ?? firstLine(error), { cause: error });
      }
    }
  }

  /** Every action but navigate works on the page the request names: the current one, or that page loaded first. */
  private async onRequestedPage(): Promise<number | null> {
    return this.page.url() === new URL(this.request.url).href ? null : this.navigate(this.request.url);
  }

  private async read(): Promise<ActionOutcome> {
    const status = await this.onRequestedPage();
    const text = await this.guard('reading the page text', () => withinDeadline(this.page.evaluate(PAGE_TEXT).then(String), this.remaining(), 'reading the page text'));
    return { ...NOTHING, status, text: truncateUtf8(text, this.target.maxTextBytes) };
  }

  private required(field: 'selector' | 'text'): string {
    const value = this.request[field];
    if (value === undefined) throw new BrowserActionError(BrowserActionErrorCodes.invalidRequest, `${this.request.action} needs a ${field}`);
    return value;
  }

  private async waitForSelector(selector: string): Promise<void> {
    try {
      await this.page.waitForSelector(selector, { state: 'attached', timeout: this.remaining() });
    } catch (error) {
      if (error instanceof errors.TimeoutError) throw new BrowserActionError(BrowserActionErrorCodes.selectorNotFound, `no element matches ${selector}`, { cause: error });
      throw new BrowserActionError(BrowserActionErrorCodes.actionFailed, firstLine(error), { cause: error });
    }
  }

  /** Runs one step on the page, turning what Playwright throws into the action's error. */
  private async guard<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof BrowserActionError) throw error;
      if (error instanceof errors.TimeoutError) throw new BrowserActionError(BrowserActionErrorCodes.timeout, `${what} did not happen within ${this.request.timeoutMs} ms`, { cause: error });
      throw new BrowserActionError(BrowserActionErrorCodes.actionFailed, firstLine(error), { cause: error });
    }
  }

  private async click(): Promise<ActionOutcome> {
    const selector = this.required('selector');
    const status = await this.onRequestedPage();
    await this.waitForSelector(selector);
    this.target.traffic.takeNavigationRedirect();
    await this.guard(`the click on ${selector}`, async () => {
      await this.page.click(selector, { timeout: this.remaining() });
      // A click that started a navigation answers with the page it led to.
      await this.page.waitForLoadState('load', { timeout: this.remaining() });
    });
    const redirect = this.target.traffic.takeNavigationRedirect();
    // The click itself happened: a refused hop of the navigation it started is in `blocked`.
    const followed = redirect ? await this.settle(redirect).catch(() => null) : null;
    return { ...NOTHING, status: followed ?? status };
  }

  private async type(): Promise<ActionOutcome> {
    const selector = this.required('selector');
    const text = this.required('text');
    const status = await this.onRequestedPage();
    await this.waitForSelector(selector);
    await this.guard(`typing into ${selector}`, () => this.page.fill(selector, text, { timeout: this.remaining() }));
    return { ...NOTHING, status };
  }

  private async screenshot(): Promise<ActionOutcome> {
    const status = await this.onRequestedPage();
    const png = await this.guard('the screenshot', () => this.page.screenshot({ type: 'png', fullPage: false, timeout: this.remaining() }));
    const screenshot = await this.target.payloads.putJson(this.request.workspaceId, { base64: png.toString('base64'), mediaType: 'image/png' });
    return { status, text: null, screenshot, screenshotSha256: createHash('sha256').update(png).digest('hex') };
  }
}

export function performAction(target: ActionTarget, request: ParsedBrowserActRequest): Promise<ActionOutcome> {
  return new PageAction(target, request).perform();
}
