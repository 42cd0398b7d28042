import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expectStatus, request, ROOT, spawnApp, startInfrastructure, type AppProcess, type Infrastructure } from './app-process';
import { ratio, summarise, table, type Summary } from './stats';

export interface ConsoleBenchOptions {
  /** Cold loads of each page, after one unmeasured warm-up load. */
  samples: number;
}

export interface ConsoleLoad {
  /** Every request the page made until its data was on screen. */
  requests: number;
  /** API calls among them. */
  apiRequests: number;
  /** Bytes of response bodies as they crossed the wire (compressed when the server compressed them). */
  transferBytes: number;
  /** Bytes of the same bodies decoded. */
  decodedBytes: number;
  /** Responses that came compressed (content-encoding br or gzip). */
  compressed: number;
}

/** One request of a load on its time axis, ms from navigation start. */
export interface TimelineEntry {
  name: string;
  startMs: number;
  endMs: number;
}

export interface ConsoleBenchResults {
  build: string;
  overview: ConsoleLoad;
  /** The requests of one measured load and when its first data showed: the critical path. */
  timeline: { entries: TimelineEntry[]; domContentLoadedMs: number; firstDataMs: number };
  /** Navigation start to the overview's first data (its run counts) on screen, a cold browser context each time. */
  overviewFirstDataMs: Summary;
  /** Navigation start to the load event of a static HTML page of the overview's decoded size, from the same server. */
  staticPageMs: Summary;
  staticBytes: number;
  /** overviewFirstDataMs.p50 / staticPageMs.p50; the goal is at most 1.5. */
  p50Ratio: number;
}

const CHROMIUM = process.env['PACKETAGENT_CHROMIUM'] ?? '/usr/bin/chromium';
const EMAIL = 'bench@example.com';
const PASSWORD = randomBytes(18).toString('base64url');
const GOAL = 1.5;

function consoleBuild(): string {
  const candidates = [join(ROOT, 'dist/frontend/console/browser'), join(ROOT, 'frontend/console/dist/browser')].filter((dir) => existsSync(join(dir, 'index.html')));
  if (candidates.length === 0) throw new Error('the console is not built: run npx nx run console:build');
  return candidates.reduce((a, b) => (statSync(join(b, 'index.html')).mtimeMs > statSync(join(a, 'index.html')).mtimeMs ? b : a));
}

/**
 * A build made without its .br/.gz files is compressed by the server in the background after its
 * first answer: measure only once the main script comes compressed.
 */
async function compressedAssets(baseUrl: string): Promise<void> {
  const index = await (await fetch(`${baseUrl}/`)).text();
  const script = /src="(main-[A-Z0-9]{8}\.js)"/.exec(index)?.[1];
  if (!script) throw new Error('the console index names no main script');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(`${baseUrl}/${script}`, { headers: { 'accept-encoding': 'br, gzip' } });
    await response.arrayBuffer();
    if (response.headers.get('content-encoding')) return;
    if (Date.now() > deadline) throw new Error('the console assets never came compressed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Records what a page fetches: counts and bytes on the wire and decoded. */
function watchLoad(page: Page): () => Promise<ConsoleLoad> {
  const pending: Promise<{ api: boolean; transfer: number; decoded: number; compressed: boolean }>[] = [];
  page.on('requestfinished', (req) => {
    pending.push(
      (async () => {
        const response = await req.response();
        const sizes = await req.sizes();
        const body = response ? await response.body().catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
        const encoding = response?.headers()['content-encoding'];
        return { api: new URL(req.url()).pathname.startsWith('/api/'), transfer: sizes.responseBodySize, decoded: body.length, compressed: encoding === 'br' || encoding === 'gzip' };
      })(),
    );
  });
  return async () => {
    const all = await Promise.all(pending);
    return {
      requests: all.length,
      apiRequests: all.filter((r) => r.api).length,
      transferBytes: all.reduce((sum, r) => sum + r.transfer, 0),
      decodedBytes: all.reduce((sum, r) => sum + r.decoded, 0),
      compressed: all.filter((r) => r.compressed).length,
    };
  };
}

/**
 * The operations console's overview through the compiled app: navigation start to its first data
 * on screen (the run counts), in a cold browser context each time, against a static HTML page of
 * the same decoded size served by the same server from the same directory, timed to its load
 * event. Also what the overview fetched: requests, API calls, bytes on the wire.
 */
export async function benchConsole(options: ConsoleBenchOptions): Promise<ConsoleBenchResults> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: set PACKETAGENT_CHROMIUM`);
  const build = consoleBuild();
  const servedDir = mkdtempSync(join(tmpdir(), 'pa-bench-console-'));
  let infra: Infrastructure | null = null;
  let app: AppProcess | null = null;
  let browser: Browser | null = null;
  try {
    // A copy, so that the static page can sit next to the build without touching it.
    cpSync(build, servedDir, { recursive: true });
    // Compressed as the console's own build does it, so no compression runs while it is measured.
    const compressed = spawnSync(process.execPath, [join(ROOT, 'frontend/console/precompress.mjs'), servedDir], { stdio: 'inherit' });
    if (compressed.status !== 0) throw new Error('compressing the console build failed');
    infra = await startInfrastructure();
    app = await spawnApp(infra, 'the app', { PACKETAGENT_CONSOLE_DIR: servedDir });
    const setup = await request<{ workspaceId: string; apiKey: string }>(`${app.baseUrl}/api/v1/setup`, 'POST', {
      body: { token: infra.setupToken, email: EMAIL, password: PASSWORD, workspace: 'Bench' },
    });
    expectStatus(setup, 201, 'setup');
    await compressedAssets(app.baseUrl);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking'] });
    const signIn = await browser.newContext({ baseURL: app.baseUrl });
    const login = await signIn.request.post('/api/v1/auth/login', { data: { email: EMAIL, password: PASSWORD } });
    if (login.status() !== 200) throw new Error(`signing in answered ${login.status()}`);
    const storageState = await signIn.storageState();
    await signIn.close();

    const workspaceId = setup.body.workspaceId;
    const measureOverview = async (): Promise<{ ms: number; load: ConsoleLoad; timeline: ConsoleBenchResults['timeline'] }> => {
      const context = await browser!.newContext({ baseURL: app!.baseUrl, storageState });
      try {
        const page = await context.newPage();
        const loaded = watchLoad(page);
        await page.goto(`/w/${workspaceId}/overview`, { waitUntil: 'commit' });
        // A function, not a string, which the console's CSP would refuse to evaluate; compiled
        // without the DOM's types, hence the cast.
        const at = await page.waitForFunction(
          () => {
            const scope = globalThis as unknown as { document: { querySelector(selector: string): unknown } };
            return scope.document.querySelector('#runs-heading ~ .cards .value') ? performance.now() : 0;
          },
          undefined,
          { polling: 'raf', timeout: 30_000 },
        );
        const ms = (await at.jsonValue()) as number;
        const entries = await page.evaluate<TimelineEntry[]>(
          "performance.getEntriesByType('resource').map((e) => ({ name: new URL(e.name).pathname, startMs: Math.round(e.startTime), endMs: Math.round(e.responseEnd) }))",
        );
        const domContentLoadedMs = await page.evaluate<number>("Math.round(performance.getEntriesByType('navigation')[0].domContentLoadedEventStart)");
        return { ms, load: await loaded(), timeline: { entries, domContentLoadedMs, firstDataMs: Math.round(ms) } };
      } finally {
        await context.close();
      }
    };
    const measureStatic = async (): Promise<number> => {
      const context = await browser!.newContext({ baseURL: app!.baseUrl, storageState });
      try {
        const page = await context.newPage();
        const response = await page.goto('/bench-static.html', { waitUntil: 'load' });
        if (response?.status() !== 200) throw new Error(`the static page answered ${String(response?.status())}`);
        return await page.evaluate<number>("performance.getEntriesByType('navigation')[0].loadEventStart");
      } finally {
        await context.close();
      }
    };

    // One unmeasured load first (the server's caches, Chromium's own start); it also tells the
    // size of everything the overview fetches, which the static page is made to match.
    const warm = await measureOverview();
    const staticBytes = warm.load.decodedBytes;
    const shell = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>static</title></head><body><pre>\n</pre></body></html>';
    const line = 'static baseline text of the same size as the console overview\n';
    const filler = line.repeat(Math.ceil(staticBytes / line.length)).slice(0, Math.max(0, staticBytes - shell.length));
    writeFileSync(join(servedDir, 'bench-static.html'), shell.replace('<pre>\n', `<pre>\n${filler}`));
    await measureStatic();

    // Alternated, so that both see the same load of a machine shared with other work.
    const firstData: number[] = [];
    const staticPage: number[] = [];
    let load: ConsoleLoad | null = null;
    let timeline: ConsoleBenchResults['timeline'] = warm.timeline;
    for (let i = 0; i < options.samples; i++) {
      const measured = await measureOverview();
      firstData.push(measured.ms);
      if (i === 0) ({ load, timeline } = measured);
      staticPage.push(await measureStatic());
    }
    const overviewFirstDataMs = summarise(firstData);
    const staticPageMs = summarise(staticPage);
    return {
      build,
      overview: load ?? { requests: 0, apiRequests: 0, transferBytes: 0, decodedBytes: 0, compressed: 0 },
      timeline,
      overviewFirstDataMs,
      staticPageMs,
      staticBytes,
      p50Ratio: overviewFirstDataMs.p50 / staticPageMs.p50,
    };
  } finally {
    await browser?.close();
    await app?.stop();
    await infra?.cleanup();
    rmSync(servedDir, { recursive: true, force: true });
  }
}

export function printConsole(results: ConsoleBenchResults): void {
  const o = results.overview;
  process.stdout.write(
    `\n(h) console overview: ${o.requests} requests (${o.apiRequests} to the API, ${o.compressed} compressed), ` +
      `${(o.transferBytes / 1024).toFixed(1)} KiB on the wire, ${(o.decodedBytes / 1024).toFixed(1)} KiB decoded; ${results.overviewFirstDataMs.count} cold loads each (goal: first data within ${GOAL}x of the static page)\n`,
  );
  const t = results.timeline;
  process.stdout.write(
    `one overview load (first data at ${t.firstDataMs} ms, DOMContentLoaded at ${t.domContentLoadedMs} ms):\n${table(
      ['request', 'start ms', 'end ms'],
      t.entries.map((e) => [e.name, e.startMs, e.endMs]),
    )}\n`,
  );
  process.stdout.write(
    `${table(
      ['load', 'p50 ms', 'p99 ms', 'max ms', 'p50 vs static page', 'goal'],
      [
        ['overview: navigation start -> first data', results.overviewFirstDataMs, results.p50Ratio <= GOAL ? 'met' : 'not met'],
        [`static page of ${results.staticBytes} bytes: navigation start -> load`, results.staticPageMs, ''],
      ].map(([kind, s, goal]) => [kind as string, (s as Summary).p50, (s as Summary).p99, (s as Summary).max, ratio((s as Summary).p50, results.staticPageMs.p50), goal as string]),
    )}\n`,
  );
}
