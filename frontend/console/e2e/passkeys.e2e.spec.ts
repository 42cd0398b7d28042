import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { isSerious, runAxe } from './page-checks';
import { freePort } from '@packetagent/testing';
import { startTestApp, type TestApp } from '../../../services/all-in-one/src/testing/app.testkit';

const CHROMIUM = process.env['PACKETAGENT_CHROMIUM'] ?? '/usr/bin/chromium';
const BUILD = join(__dirname, '../dist/browser/index.html');
const EMAIL = 'passkeys@example.com';
const PASSWORD = 'correct horse battery staple';

interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId: string;
  signCount: number;
}

// The console in Chromium against the whole app, with a CDP virtual authenticator standing in
// for the device's platform authenticator (resident keys, user verification that succeeds).
describe('passkeys in the console', () => {
  let sut: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(BUILD)) throw new Error(`the console is not built (${BUILD} is missing): run npx nx run console:build`);
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set PACKETAGENT_CHROMIUM`);
    const port = await freePort();
    // A passkey is bound to a host name (never an IP address): the console is opened at localhost.
    const origin = `http://localhost:${port}`;
    sut = await startTestApp({ PACKETAGENT_PORT: String(port), PACKETAGENT_PUBLIC_URL: origin });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking'] });
    context = await browser.newContext({ baseURL: origin });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
  });

  afterAll(async () => {
    await browser?.close();
    await sut?.close();
  });

  async function credentials(): Promise<VirtualCredential[]> {
    return (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as VirtualCredential[];
  }

  /** axe-core's serious and critical findings on the page as it is. */
  async function accessibilityFindings(): Promise<string[]> {
    return (await runAxe(page)).filter(isSerious).map((v) => v.id);
  }

  /** Makes the browser's session look as if it signed in `minutes` ago. */
  async function ageSession(minutes: number): Promise<void> {
    const cookie = (await context.cookies()).find((c) => c.name === 'pa_session');
    if (!cookie) throw new Error('the browser has no session cookie');
    const key = `${sut.redis.keyPrefix}session:${createHash('sha256').update(cookie.value).digest('hex')}`;
    const record = JSON.parse((await sut.redis.redis.get(key)) ?? 'null') as Record<string, unknown> | null;
    if (!record) throw new Error('the session is not in Redis');
    const then = new Date(Date.now() - minutes * 60_000).toISOString();
    await sut.redis.redis.set(key, JSON.stringify({ ...record, createdAt: then, authenticatedAt: then }), 'KEEPTTL');
  }

  it('registers a passkey from the account page, then signs in with it alone after signing out', async () => {
    await page.goto('/');
    await page.waitForURL('**/sign-in**');
    await page.getByRole('link', { name: 'Set up this installation' }).click();
    await page.getByLabel('Setup token').fill(sut.setupToken);
    await page.getByLabel('Owner e-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('First workspace').fill('Operations');
    await page.getByRole('button', { name: 'Set up' }).click();
    await page.getByRole('button', { name: 'Continue to the console' }).click();
    await page.waitForURL('**/overview');

    await page.getByRole('link', { name: 'Your account' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await page.getByText('No passkeys yet.').waitFor();
    await page.getByLabel('Passkey name').fill('This browser');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Added passkey This browser.').waitFor();
    await page.getByRole('cell', { name: 'This browser', exact: true }).waitFor();
    const [credential] = await credentials();
    expect(credential).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
    const stored = await sut.db.pool.query(`SELECT credential_id, name FROM identity.passkeys`);
    expect(stored.rows).toEqual([{ credential_id: Buffer.from(credential!.credentialId, 'base64').toString('base64url'), name: 'This browser' }]);

    expect(await accessibilityFindings()).toEqual([]);

    await page.getByRole('button', { name: 'Rename This browser' }).click();
    await page.getByLabel('New name for This browser').fill('Laptop');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Renamed to Laptop.').waitFor();

    // The authenticator already holds this account's passkey: the browser refuses to make another.
    await page.getByLabel('Passkey name').fill('Again');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Already registered');
    expect(await credentials()).toHaveLength(1);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/sign-in**');
    expect(await accessibilityFindings()).toEqual([]);
    // No address typed: the browser offers the passkey it holds for this site.
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL('**/overview');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const used = await sut.db.pool.query(`SELECT last_used_at IS NOT NULL AS used, counter FROM identity.passkeys`);
    expect(used.rows).toEqual([{ used: true, counter: String((await credentials())[0]!.signCount) }]);
  });

  it('removes the passkey once the password confirms a session signed in long ago, after which it no longer signs in', async () => {
    await ageSession(30);
    await page.getByRole('link', { name: 'Your account' }).click();
    await page.getByRole('button', { name: 'Remove Laptop' }).click();
    await page.getByRole('form', { name: 'Confirm it is you' }).waitFor();
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('password: is not correct');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.getByText('Removed passkey Laptop.').waitFor();
    await page.getByText('No passkeys yet.').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/sign-in**');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('the passkey was not accepted');
    expect(page.url()).toContain('/sign-in');
    expect(consoleErrors).toEqual([]);
  });
});
