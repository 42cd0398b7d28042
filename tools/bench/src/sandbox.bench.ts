import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { CommandBus, topology } from '@packetagent/bus';
import { SandboxCommands } from '@packetagent/contracts';
import { startApp, type App } from './app-process';
import { now, ratio, summarise, table, type Summary } from './stats';

export interface SandboxBenchOptions {
  warmup: number;
  count: number;
}

export interface BrowserBenchResult {
  /** `navigate` to a local page through the sandbox service: a NATS request, the run's context, every request fetched through the address checks. */
  sandboxed: Summary;
  /** `page.goto` of the same page in bare Playwright with the same Chromium. */
  bare: Summary;
}

export interface SandboxResults {
  /** `true` through the compiled app: a NATS request to the sandbox service, bubblewrap, the record in Postgres, the answer. */
  sandboxed: Summary;
  /** `true` spawned directly from this process. */
  direct: Summary;
  driver: string;
  unenforced: string[];
  browser: BrowserBenchResult | null;
}

function spawnTrue(): Promise<number> {
  const t0 = now();
  return new Promise((resolve, reject) => {
    const child = spawn('true', [], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', () => resolve(now() - t0));
  });
}

/** Start-to-exit of `true`: through the sandbox service against a bare spawn, one at a time, in the same run. */
export async function benchSandbox(options: SandboxBenchOptions): Promise<SandboxResults> {
  const page = await localPage();
  const app = await startApp({ PACKETAGENT_HTTP_ALLOW_PRIVATE: page.host });
  try {
    const bus = new CommandBus(app.bus.nc, topology(app.bus.prefix));
    const { workspaceId } = app.setup;
    const status = await bus.request(SandboxCommands.status, {});
    if (!status.driver) throw new Error(`the sandbox has no driver here: ${status.drivers.map((driver) => `${driver.name}: ${driver.detail}`).join('; ')}`);
    let n = 0;
    const sandboxed = async (): Promise<number> => {
      const t0 = now();
      const result = await bus.request(SandboxCommands.exec, { execId: `bench-${++n}`, workspaceId, argv: ['true'], requestedBy: { kind: 'user', id: 'bench' } }, { timeoutMs: 30_000 });
      const ms = now() - t0;
      if (result.state !== 'exited' || result.exitCode !== 0) throw new Error(`true through the sandbox ended ${result.state} (${result.message ?? result.exitCode})`);
      return ms;
    };
    const measure = async (op: () => Promise<number>, count: number) => {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) samples.push(await op());
      return samples;
    };
    await measure(spawnTrue, options.warmup);
    await measure(sandboxed, options.warmup);
    const direct = await measure(spawnTrue, options.count);
    const through = await measure(sandboxed, options.count);
    const browser = status.browser.available ? await benchBrowser(app, bus, page.url, options) : null;
    return { sandboxed: summarise(through), direct: summarise(direct), driver: status.driver, unenforced: status.drivers.find((driver) => driver.name === status.driver)?.unenforced ?? [], browser };
  } finally {
    await app.stop();
    page.close();
  }
}

const CHROMIUM = process.env['PACKETAGENT_CHROMIUM'] ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu', '--disable-quic'];

/** A page with a stylesheet and an image, on loopback. */
async function localPage(): Promise<{ url: string; host: string; close(): void }> {
  const server = createServer((request, response) => {
    if (request.url === '/style.css') return void response.writeHead(200, { 'content-type': 'text/css' }).end('body { font-family: sans-serif }');
    if (request.url === '/pixel.svg') return void response.writeHead(200, { 'content-type': 'image/svg+xml' }).end('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
    response.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Bench</title><link rel="stylesheet" href="/style.css"></head><body><h1>Bench page</h1><img src="/pixel.svg"></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `http://${host}/page`, host, close: () => server.close() };
}

/** navigate through the sandbox against page.goto in bare Playwright, one at a time, each on a warm context. */
async function benchBrowser(app: App, bus: CommandBus, url: string, options: SandboxBenchOptions): Promise<BrowserBenchResult | null> {
  if (!existsSync(CHROMIUM)) return null;
  const origin = new URL(url).origin;
  const navigate = async (): Promise<number> => {
    const t0 = now();
    const result = await bus.request(SandboxCommands.browserAct, { workspaceId: app.setup.workspaceId, runId: 'bench-browser', action: 'navigate', url, allowedUrls: [`${origin}/*`] }, { timeoutMs: 60_000 });
    const ms = now() - t0;
    if (!result.ok || result.blocked.length) throw new Error(`navigate through the sandbox failed: ${result.error?.message ?? JSON.stringify(result.blocked)}`);
    return ms;
  };
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext();
    const bare = await context.newPage();
    const goto = async (): Promise<number> => {
      const t0 = now();
      await bare.goto(url, { waitUntil: 'load' });
      return now() - t0;
    };
    const count = Math.max(10, Math.round(options.count / 4));
    for (let i = 0; i < options.warmup; i++) {
      await goto();
      await navigate();
    }
    const bareSamples: number[] = [];
    const sandboxSamples: number[] = [];
    for (let i = 0; i < count; i++) {
      bareSamples.push(await goto());
      sandboxSamples.push(await navigate());
    }
    await bus.request(SandboxCommands.browserClose, { workspaceId: app.setup.workspaceId, runId: 'bench-browser' });
    return { sandboxed: summarise(sandboxSamples), bare: summarise(bareSamples) };
  } finally {
    await browser.close();
  }
}

export function printSandbox(sandbox: SandboxResults): void {
  process.stdout.write(`\n(h) sandbox: start-to-exit of \`true\` one at a time, through the sandbox service (${sandbox.driver}: NATS request, checks, namespaces, control groups, record, answer) and spawned directly from this process\n`);
  const goal = 3 * sandbox.direct.p50 + 20;
  process.stdout.write(
    table(
      ['path', 'count', 'p50 ms', 'p99 ms', 'max ms', 'p50 vs direct'],
      [
        ['through the sandbox', sandbox.sandboxed.count, sandbox.sandboxed.p50, sandbox.sandboxed.p99, sandbox.sandboxed.max, ratio(sandbox.sandboxed.p50, sandbox.direct.p50)],
        ['direct spawn', sandbox.direct.count, sandbox.direct.p50, sandbox.direct.p99, sandbox.direct.max, '1.00x'],
      ],
    ),
  );
  process.stdout.write(`\ngoal: p50 at most 3x direct + 20 ms = ${goal.toFixed(1)} ms; ${sandbox.sandboxed.p50 <= goal ? 'met' : 'not met'}${sandbox.unenforced.length ? `; not enforced here: ${sandbox.unenforced.join('; ')}` : ''}\n`);
  if (!sandbox.browser) {
    process.stdout.write('browser: not measured (no Chromium)\n');
    return;
  }
  const { sandboxed, bare } = sandbox.browser;
  process.stdout.write('\nbrowser: navigate to a local page (HTML, a stylesheet, an image) on a warm page, one at a time, through the sandbox service and in bare Playwright with the same Chromium\n');
  process.stdout.write(
    table(
      ['path', 'count', 'p50 ms', 'p99 ms', 'max ms', 'p50 vs bare'],
      [
        ['through the sandbox', sandboxed.count, sandboxed.p50, sandboxed.p99, sandboxed.max, ratio(sandboxed.p50, bare.p50)],
        ['bare Playwright', bare.count, bare.p50, bare.p99, bare.max, '1.00x'],
      ],
    ),
  );
  process.stdout.write(`\ngoal: at most 1.5x bare; ${sandboxed.p50 <= 1.5 * bare.p50 ? 'met' : 'not met'}\n`);
}
