import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DESKTOP, isSerious, overflow, PHONE, runAxe } from './page-checks';
import { ProviderFakes } from '@packetagent/providers';
import { DRAFT_PROMPT, DRAFTED_DEFINITION } from '../../../services/all-in-one/src/testing/drafted-worker.fixture';
import { startExecutionApp, type ExecutionApp } from '../../../services/all-in-one/src/testing/execution.testkit';

const CHROMIUM = process.env['PACKETAGENT_CHROMIUM'] ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env['PACKETAGENT_SCREENSHOTS_DIR'];
const BUILD = join(__dirname, '../dist/browser/index.html');
const EMAIL = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';


/**
 * The creation studio in Chromium against the whole app in-process (real Postgres, NATS, Redis,
 * the supervisor with the scripted provider) and a local OpenAI-compatible model server.
 */
describe('creation studio', () => {
  const local = new ProviderFakes.FakeOpenAiServer();
  let app: ExecutionApp;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const findings: string[] = [];
  const studio = () => `/w/${app.ws}/studio`;

  beforeAll(async () => {
    if (!existsSync(BUILD)) throw new Error(`the console is not built (${BUILD} is missing): run npx nx run console:build`);
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set PACKETAGENT_CHROMIUM`);
    await local.start();
    // The local server makes `local` models ready; without PACKETAGENT_LOCAL_MODEL the presets
    // skip it, so the default preset stays unready and drafts fall back to the builder.
    app = await startExecutionApp({ env: { PACKETAGENT_LOCAL_BASE_URL: local.url, PACKETAGENT_LOCAL_API: 'openai' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking'] });
    const context = await browser.newContext({ viewport: DESKTOP, baseURL: app.sut.baseUrl });
    // Signed in the way the sign-in page does it: the session cookie, and the CSRF token where the console keeps it.
    const login = await context.request.post('/api/v1/auth/login', { data: { email: EMAIL, password: PASSWORD } });
    if (!login.ok()) throw new Error(`login failed: ${login.status()}`);
    const { csrfToken } = (await login.json()) as { csrfToken: string };
    await context.addInitScript((token) => localStorage.setItem('pa.csrf', token), csrfToken);
    page = await context.newPage();
    page.on('console', (message) => {
      // Chromium logs every 4xx answer as "Failed to load resource"; the studio expects some
      // (400 for an invalid definition, 422 for a refused deployment) and shows them.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
  });

  beforeEach(() => local.reset());

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await local.close();
  });

  /** No serious or critical axe violation, and nothing wider than a phone's screen at 390 px. */
  async function check(name: string): Promise<void> {
    for (const violation of (await runAxe(page)).filter(isSerious)) {
      findings.push(`${name}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
    }
    await page.setViewportSize(PHONE);
    const wide = await overflow(page);
    if (wide.by > 0) findings.push(`${name} (phone): ${wide.by} px too wide (${wide.culprits.join(', ')})`);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `studio-${name}-phone.png`), fullPage: true });
    await page.setViewportSize(DESKTOP);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `studio-${name}-desktop.png`), fullPage: true });
  }


  /** Focus lands on the result after it renders: wait for it there rather than read it once. */
  const focusOn = (text: RegExp) => page.waitForFunction((source) => new RegExp(source).test(document.activeElement?.textContent?.trim() ?? ''), text.source, { timeout: 5_000 });

  it('takes a template from the gallery to a demo worker, deploys it and follows its run to success', async () => {
    await page.goto(`/w/${app.ws}/workers`);
    await page.getByRole('link', { name: 'New worker' }).click();
    await page.waitForURL('**/studio');
    await page.getByRole('heading', { name: 'Creation studio', level: 1 }).waitFor();
    const gallery = page.getByRole('list', { name: 'Templates' });
    const card = gallery.getByRole('article', { name: 'Research summarizer' });
    await card.getByText('Started on demand').waitFor();
    await gallery.getByRole('article', { name: 'Weekly release notes' }).getByText('Every Friday at 16:00').waitFor();
    await card.getByText(/^Needs 1 thing$/).waitFor();
    await check('gallery');

    await card.getByRole('link', { name: 'Research summarizer' }).click();
    await page.waitForURL('**/studio/templates/research-summarizer');
    await page.getByRole('heading', { name: 'Research summarizer', level: 1 }).waitFor();
    expect(await page.getByTestId('template-definition').textContent()).toContain('# Research summarizer: started on demand');
    const lacks = page.getByRole('list', { name: 'Model providers missing' });
    expect(await lacks.textContent()).toContain('preset:default');
    await check('template');

    await page.getByLabel('Name', { exact: true }).fill('research-demo');
    await page.getByRole('button', { name: 'Create demo worker' }).click();
    await page.getByRole('heading', { name: 'Created demo worker research-demo' }).waitFor();
    await focusOn(/^Created demo worker research-demo$/);
    await page.getByText('Ready to run here').last().waitFor();

    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await page.getByText(/^Deployed version 1 as/).waitFor();
    expect(await page.getByLabel('Run input (JSON)').inputValue()).toContain('412 operations teams');
    await page.getByRole('button', { name: 'Run with example input' }).click();
    const follow = page.getByRole('link', { name: /^Follow run / });
    await follow.waitFor();
    await focusOn(/^Follow run /);
    await check('template-launched');
    await follow.click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const ended = page.getByTestId('run-state').getByText(/^(succeeded|failed|abandoned|stopped)$/);
    await ended.waitFor({ timeout: 90_000 });
    const runId = /\/runs\/([^/?]+)/.exec(page.url())![1]!;
    // The events say why when it did not succeed.
    expect({ state: await ended.textContent(), events: (await app.events(runId)).map((event) => event.type) }).toMatchObject({ state: 'succeeded' });
  });

  it('refuses to deploy a worker that lacks what it needs, naming each missing item, and deploys it when told to anyway', async () => {
    await page.goto(`${studio()}/templates/research-summarizer`);
    await page.getByLabel('Name', { exact: true }).fill('research-demo');
    await page.getByRole('button', { name: 'Create worker', exact: true }).click();
    await page.getByText(/already exists in this workspace/).first().waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Name', { exact: true }).fill('research-for-real');
    await page.getByRole('button', { name: 'Create worker', exact: true }).click();
    await page.getByRole('heading', { name: 'Created worker research-for-real' }).waitFor();
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    const refusal = page.getByRole('alert').filter({ has: page.getByRole('heading', { name: /^Deployment refused/ }) });
    await refusal.waitFor();
    await focusOn(/^Deployment refused/);
    expect(await refusal.getByRole('list', { name: 'Model providers missing' }).textContent()).toContain('preset:default');
    await check('deploy-refused');
    await refusal.getByRole('button', { name: 'Deploy anyway' }).click();
    await page.getByText(/^Deployed version 1 as .*, missing 1 requirement\.$/).waitFor();
  });

  it('drafts a worker without a model when none is ready, labelled so, shows issues at their paths and saves it', async () => {
    await page.goto(studio());
    await page.getByLabel('What should the worker do?').fill('Summarize the research paper at https://arxiv.org/abs/2401.00001 on demand');
    expect(await page.getByLabel('Model that drafts').inputValue()).toBe('preset:default');
    await page.getByRole('button', { name: 'Draft', exact: true }).click();
    const drafter = page.getByTestId('drafter');
    await drafter.getByRole('heading', { name: 'Drafted without a model' }).waitFor();
    await focusOn(/^Draft for review$/);
    const who = await drafter.textContent();
    expect(who).toContain('the Research summarizer template (research-summarizer)');
    expect(who).toContain('preset default resolves to no configured provider');
    expect(who).not.toContain('Structured output');
    await page.locator('#draft-validity').getByText('The definition is valid.').waitFor();
    expect(local.requests).toEqual([]);
    await check('draft-builder');

    const editor = page.getByLabel('Definition (YAML)');
    const source = await editor.inputValue();
    const name = /^name:\s*(\S+)/m.exec(source)?.[1];
    expect(name).toBeTruthy();
    await editor.fill(source.replace(/^name:.*$/m, 'name: Not A Name'));
    await page.getByRole('button', { name: 'Check again' }).click();
    const issues = page.getByRole('list', { name: 'Issues in the definition' });
    await issues.waitFor();
    expect(await issues.textContent()).toMatch(/^\s*name — /);
    await editor.fill(source);
    await page.getByRole('button', { name: 'Check again' }).click();
    await page.locator('#draft-validity').getByText('The definition is valid.').waitFor();

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('heading', { name: `Created worker ${name!}` }).waitFor();
    await page.getByRole('link', { name: 'Workers', exact: true }).click();
    await page.getByRole('table').getByRole('link', { name: name!, exact: true }).waitFor();
  });

  it('drafts a worker with the local model through native structured output, without the grant nobody asked for', async () => {
    local.reply(ProviderFakes.reply.text(JSON.stringify(DRAFTED_DEFINITION), { usage: { inputTokens: 1800, outputTokens: 400 } }));
    await page.goto(studio());
    await page.getByLabel('What should the worker do?').fill(DRAFT_PROMPT);
    await page.getByLabel('Model that drafts').selectOption('model');
    await page.getByLabel('Provider').selectOption('local');
    await page.getByRole('button', { name: 'Draft', exact: true }).click();
    await page.getByText('Name the model, e.g. gpt-4.1 or qwen3-8b.').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('draft-model-name');
    await page.getByLabel('Model name').fill('qwen3-8b');
    await page.getByRole('button', { name: 'Draft', exact: true }).click();

    const drafter = page.getByTestId('drafter');
    await drafter.getByRole('heading', { name: 'Drafted by local/qwen3-8b' }).waitFor();
    const who = await drafter.textContent();
    expect(who).not.toContain('Drafted without a model');
    expect(who).toContain('native: the provider held the answer to the definition schema');
    expect(who).toContain('1800 input, 400 output tokens');
    const sent = local.requests[0]!.body as { response_format?: { type: string } };
    expect(sent.response_format?.type).toBe('json_schema');
    expect(await page.getByRole('list', { name: 'Grants taken out' }).textContent()).toContain('run_command');
    expect(await page.getByLabel('Definition (YAML)').inputValue()).not.toContain('run_command');
    expect(await page.getByRole('list', { name: 'Credentials missing' }).textContent()).toContain('ops_webhook');
    await check('draft-model');

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('heading', { name: 'Created worker status-summary' }).waitFor();
    const launch = page.locator('pa-studio-launch');
    await launch.getByRole('link', { name: 'store ops_webhook in Credentials' }).click();
    await page.waitForURL('**/credentials');
  });

  it('leaves no accessibility finding, page wider than a phone or console error behind', () => {
    expect(findings).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
