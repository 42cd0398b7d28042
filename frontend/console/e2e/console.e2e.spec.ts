import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { DESKTOP, isSerious, PHONE, runAxe } from './page-checks';
import { freePort } from '@packetagent/testing';
import { startTestApp, type TestApp } from '../../../services/all-in-one/src/testing/app.testkit';
import { healthReportExample, RecordingServer } from '../../../services/all-in-one/src/testing/execution.testkit';

const CHROMIUM = process.env['PACKETAGENT_CHROMIUM'] ?? '/usr/bin/chromium';
const BUILD = join(__dirname, '../dist/browser/index.html');
/** Set by `npm run screenshots`: every page is saved there at desktop and phone widths. */
const SCREENSHOTS = process.env['PACKETAGENT_SCREENSHOTS_DIR'];
const EMAIL = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';


describe('operations console', () => {
  let sut: TestApp;
  let far: RecordingServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let scriptsDir: string;
  let port: number;
  const consoleErrors: string[] = [];
  const axeFindings: string[] = [];

  beforeAll(async () => {
    if (!existsSync(BUILD)) throw new Error(`the console is not built (${BUILD} is missing): run npx nx run console:build`);
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set PACKETAGENT_CHROMIUM`);
    far = await new RecordingServer().start();
    scriptsDir = mkdtempSync(join(tmpdir(), 'pa-console-scripts-'));
    port = await freePort();
    sut = await startTestApp({
      PACKETAGENT_PORT: String(port),
      PACKETAGENT_SUPERVISOR_ENABLED: 'true',
      PACKETAGENT_SUPERVISOR_LEASE_MS: '2000',
      PACKETAGENT_SUPERVISOR_RECOVERY_INTERVAL_MS: '250',
      PACKETAGENT_SCRIPTS_DIR: scriptsDir,
      PACKETAGENT_HTTP_ALLOW_PRIVATE: [`127.0.0.1:${port}`, `127.0.0.1:${far.port}`].join(','),
      PACKETAGENT_SLACK_WEBHOOK_BASE_URL: far.origin,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    context = await browser.newContext({ viewport: DESKTOP, baseURL: sut.baseUrl, acceptDownloads: true });
    context.on('page', watch);
    page = await context.newPage();
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await sut?.close();
    await far?.close();
    if (scriptsDir) rmSync(scriptsDir, { recursive: true, force: true });
  });

  function watch(tab: Page): void {
    tab.on('console', (message) => {
      // Chromium logs every 4xx answer as "Failed to load resource"; the console expects some
      // (401 before sign-in, 400 for an invalid definition) and shows them as states. Anything
      // else logged as an error (exceptions, CSP violations, Angular errors) fails the suite.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) consoleErrors.push(`${tab.url()}: ${message.text()} (${message.location().url})`);
    });
    tab.on('pageerror', (error) => consoleErrors.push(`${tab.url()}: ${error.message}`));
  }

  /** axe-core on the page as it is (no serious or critical violation), then screenshots when asked. */
  async function check(tab: Page, name: string, options: { phone?: boolean } = {}): Promise<void> {
    const violations = await runAxe(tab);
    for (const violation of violations.filter(isSerious)) {
      axeFindings.push(`${name}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
    }
    if (options.phone) {
      await tab.setViewportSize(PHONE);
      const narrow = await runAxe(tab);
      for (const violation of narrow.filter(isSerious)) axeFindings.push(`${name} (phone): ${violation.id} ${violation.help}`);
      await tab.setViewportSize(DESKTOP);
    }
    if (SCREENSHOTS) {
      await tab.screenshot({ path: join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
      await tab.setViewportSize(PHONE);
      await tab.screenshot({ path: join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
      await tab.setViewportSize(DESKTOP);
    }
  }


  const ws = () => /\/w\/([^/]+)\//.exec(page.url())?.[1] ?? '';

  it('serves the console at / with strict headers while the API and health routes keep precedence', async () => {
    const index = await fetch(`${sut.baseUrl}/w/anything/runs`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const csp = index.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await index.text();
    const nonce = /ngCspNonce="([^"]+)"/.exec(html)?.[1];
    // 16 random bytes in base64, fresh per response, and the same one in the page and the policy.
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(csp).toContain(`'nonce-${nonce}'`);
    const again = /ngCspNonce="([^"]+)"/.exec(await (await fetch(`${sut.baseUrl}/`)).text())?.[1];
    expect(again).not.toBe(nonce);
    const script = /src="(main-[A-Z0-9]{8}\.js)"/.exec(html)?.[1];
    const asset = await fetch(`${sut.baseUrl}/${script}`);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toContain('text/javascript');

    const api = await fetch(`${sut.baseUrl}/api/v1/no-such-route`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toContain('application/problem+json');
    const health = await fetch(`${sut.baseUrl}/healthz`);
    expect(health.headers.get('content-type')).toContain('application/json');
    expect((await fetch(`${sut.baseUrl}/chunk-NOTTHERE.js`)).status).toBe(404);
  });

  it('takes a new installation from first-run setup to a run that succeeds live after approval', async () => {
    const example = healthReportExample(port);
    // The scripted provider replays the example's turns; the script names the app's own port.
    writeFileSync(join(scriptsDir, 'health-report.yaml'), example.script);

    await page.goto('/');
    await page.waitForURL('**/sign-in**');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await check(page, 'sign-in');

    await page.getByRole('link', { name: 'Set up this installation' }).click();
    await page.getByLabel('Setup token').fill(sut.setupToken);
    await page.getByLabel('Owner e-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('First workspace').fill('Operations');
    await check(page, 'setup');
    await page.getByRole('button', { name: 'Set up' }).click();
    await expect(page.getByTestId('owner-api-key').textContent()).resolves.toMatch(/^pa_/);
    await page.getByRole('button', { name: 'Continue to the console' }).click();
    await page.waitForURL('**/overview');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('pa-state p[role=status]').waitFor({ state: 'detached' });
    await check(page, 'overview');

    await page.getByRole('link', { name: 'Credentials', exact: true }).click();
    await page.getByLabel('Name').fill('ops_webhook');
    await page.getByLabel('Value').fill('https://hooks.slack.com/services/T000/B000/secret-path');
    await page.getByRole('button', { name: 'Store' }).click();
    await page.getByText('Stored ops_webhook version 1.').waitFor();
    await check(page, 'credentials');

    await page.getByRole('link', { name: 'Workers', exact: true }).click();
    await page.getByText('No workers yet.').waitFor();
    await check(page, 'workers');
    await page.getByLabel('Name').fill('health-report');
    await page.getByLabel('Description').fill('Reports the health of the local PacketAgent');
    await page.getByRole('button', { name: 'Create worker' }).click();
    await page.getByRole('heading', { name: 'health-report' }).waitFor();

    // An invalid definition shows each issue at its path; the valid one becomes version 1.
    await page.getByRole('textbox', { name: 'Definition' }).fill(example.worker.replace('approval: always', 'approval: sometimes'));
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await page.locator('#definition-issues li').first().waitFor();
    expect(await page.locator('#definition-issues li').allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^tools\[1\]\.approval — must be one of/)]));
    await page.getByRole('textbox', { name: 'Definition' }).fill(example.worker);
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await page.getByText('Saved as version 1').waitFor();
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await page.getByText('Deployed version 1').waitFor();
    await check(page, 'worker');

    await page.getByRole('button', { name: /^Start run: deployment/ }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const runUrl = page.url();
    await page.getByTestId('run-state').getByText('waiting').waitFor({ timeout: 90_000 });
    expect(far.requests).toEqual([]);
    // What it waits on in words, the approval inline, and the controls a waiting run allows.
    await page.getByTestId('run-approval').waitFor();
    expect(await page.getByTestId('waiting-on').textContent()).toContain('approval of slack_post');
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Resume' }).count()).toBe(0);
    expect(await page.getByTestId('run-meters').textContent()).toMatch(/Steps \(model turns\)\s*\d+ of 6/);
    await check(page, 'run-waiting');

    // The run page stays open: the approval happens in another tab, and the first sees the end.
    const approvals = await context.newPage();
    await approvals.goto(`/w/${ws()}/approvals`);
    await approvals.getByRole('heading', { name: /slack_post/ }).waitFor();
    expect(await approvals.locator('article pre').first().textContent()).toContain('#ops');
    await check(approvals, 'approvals', { phone: true });
    await approvals.getByRole('button', { name: 'Approve once' }).click();
    await approvals.getByText(/^Approved once\./).waitFor();

    await page.getByTestId('run-state').getByText('succeeded').waitFor({ timeout: 90_000 });
    expect(page.url()).toBe(runUrl);
    expect(far.requests).toHaveLength(1);
    await page.getByRole('list', { name: 'Run events, oldest first' }).getByText('Succeeded', { exact: true }).waitFor({ timeout: 15_000 });
    const timeline = await page.getByRole('list', { name: 'Run events, oldest first' }).textContent();
    expect(timeline).toContain('Model turn 1 (scripted/health-report, scripted)');
    expect(timeline).toContain('Policy: approval required slack_post');
    expect(timeline).toContain('Effect completed');
    expect(timeline).toContain('Checkpoint');
    const steps = await page.getByRole('list', { name: /^Run steps over/ }).textContent();
    expect(steps).toContain('Waiting for approval of slack_post');
    expect(steps).toContain('Tool call: slack_post');
    await check(page, 'run-succeeded');
    await approvals.close();
  });

  it('shows runs, budgets, notifications, audit, computers and administration without accessibility or console errors', async () => {
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.locator('table').getByText('succeeded').waitFor();
    // Names, duration and cost from the read model, not ids.
    await page.locator('table').getByText('health-report').first().waitFor();
    await page.locator('table tbody tr').first().locator('td').nth(5).getByText(/^\$/).waitFor();
    await check(page, 'runs');

    await page.getByRole('link', { name: 'Budgets', exact: true }).click();
    await page.getByRole('heading', { name: 'Budgets' }).waitFor();
    await page.locator('pa-state p[role=status]').waitFor({ state: 'detached' });
    await check(page, 'budgets');

    await page.getByRole('link', { name: 'Notifications', exact: true }).click();
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    await page.locator('pa-state p[role=status]').waitFor({ state: 'detached' });
    await check(page, 'notifications');

    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.locator('pa-state p[role=status]').waitFor({ state: 'detached' });
    await check(page, 'audit');

    await page.getByRole('link', { name: 'Computers', exact: true }).click();
    await page.getByText('No computers are registered in this workspace.').waitFor();
    await check(page, 'computers');

    await page.getByRole('link', { name: 'Admin', exact: true }).click();
    await page.getByRole('cell', { name: 'setup' }).or(page.getByText('No API keys.')).first().waitFor();
    await check(page, 'admin');

    expect(axeFindings).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
