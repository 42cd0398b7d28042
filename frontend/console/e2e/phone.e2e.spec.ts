import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { overflow, PHONE } from './page-checks';
import { healthReportExample, RecordingServer, startExecutionApp, type ExecutionApp } from '../../../services/all-in-one/src/testing/execution.testkit';

const CHROMIUM = process.env['PACKETAGENT_CHROMIUM'] ?? '/usr/bin/chromium';
const BUILD = join(__dirname, '../dist/browser/index.html');
const EMAIL = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';

/**
 * Every page of the console at phone size (390x844) against the whole app in-process: nothing
 * wider than the screen, and the first Approve button of the approvals inbox on the first screen.
 */
describe('console on a phone', () => {
  let app: ExecutionApp;
  let far: RecordingServer;
  let browser: Browser;
  let page: Page;
  let runId: string;
  let workerId: string;

  beforeAll(async () => {
    if (!existsSync(BUILD)) throw new Error(`the console is not built (${BUILD} is missing): run npx nx run console:build`);
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set PACKETAGENT_CHROMIUM`);
    far = await new RecordingServer().start();
    app = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`], env: { PACKETAGENT_SLACK_WEBHOOK_BASE_URL: far.origin } });
    const example = healthReportExample(app.port);
    app.writeScript('health-report', example.script);
    // The example keeps its webhook in a credential; a run waits on the approval of its post.
    const stored = await app.sut.request('PUT', `/api/v1/workspaces/${app.ws}/credentials/ops_webhook`, {
      body: { value: 'https://hooks.slack.com/services/T000/B000/secret-path' },
      headers: { authorization: `Bearer ${app.owner}` },
    });
    if (stored.status !== 200) throw new Error(`credential not stored: ${stored.status} ${stored.text}`);
    const deploymentId = await app.deploy(example.worker);
    runId = await app.startRun(deploymentId);
    await app.waitForState(runId, ['waiting'], 90_000);
    const run = await app.sut.request<{ workerId: string }>('GET', `/api/v1/workspaces/${app.ws}/runs/${runId}`, { headers: { authorization: `Bearer ${app.owner}` } });
    workerId = run.body.workerId;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking'] });
    // Not isMobile: a mobile viewport zooms out to fit a page that is too wide, which would hide it.
    const context = await browser.newContext({ viewport: PHONE, baseURL: app.sut.baseUrl, hasTouch: true });
    // Signed in the way the sign-in page does it: the session cookie, and the CSRF token where the console keeps it.
    const login = await context.request.post('/api/v1/auth/login', { data: { email: EMAIL, password: PASSWORD } });
    if (!login.ok()) throw new Error(`login failed: ${login.status()}`);
    const { csrfToken } = (await login.json()) as { csrfToken: string };
    await context.addInitScript((token) => localStorage.setItem('pa.csrf', token), csrfToken);
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await far?.close();
  });

  async function settled(tab: Page): Promise<void> {
    await tab.locator('main h1').first().waitFor();
    await tab.locator('pa-state p[role=status]').first().waitFor({ state: 'detached' });
  }

  it('fits every page of the console in the width of a phone', async () => {
    await page.goto('/');
    await page.waitForURL('**/overview');
    const sections = await page.locator('nav[aria-label="Console sections"] a').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''));
    expect(sections.length).toBeGreaterThan(5);
    const ws = app.ws;
    const pages = [...sections, `/w/${ws}/runs/${runId}`, `/w/${ws}/workers/${workerId}`, '/setup', '/no-such-page'];
    const wide: string[] = [];
    for (const path of pages) {
      await page.goto(path);
      await settled(page);
      const found = await overflow(page);
      if (found.by > 0) wide.push(`${path}: ${found.by} px too wide (${found.culprits.join(', ')})`);
    }
    expect(wide).toEqual([]);
  });

  it('shows the first Approve button of the approvals inbox on the first screen', async () => {
    await page.goto(`/w/${app.ws}/approvals`);
    const approve = page.getByRole('button', { name: /^Approve/ }).first();
    await approve.waitFor();
    const box = await approve.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.y + box!.height).toBeLessThanOrEqual(PHONE.height);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
  });

  it('approves the waiting run from its own page, which then goes on to succeed', async () => {
    await page.goto(`/w/${app.ws}/runs/${runId}`);
    await page.getByTestId('run-approval').getByRole('button', { name: 'Approve once' }).click();
    await page.getByTestId('run-approval').getByText('Approved once.').or(page.getByTestId('run-state').getByText('succeeded')).first().waitFor();
    await page.getByTestId('run-state').getByText('succeeded').waitFor({ timeout: 60_000 });
    expect(far.requests).toHaveLength(1);
  });
});
