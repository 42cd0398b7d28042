import { createHash } from 'node:crypto';
import { PostgresPayloadStore } from '@packetagent/eventstore';
import { createTestDatabase, eventually, type TestDatabase } from '@packetagent/testing';
import type { HostResolver } from '@packetagent/tools';
import type { BrowserActResult } from '@packetagent/contracts';
import type { Browser } from 'playwright-core';
import { NOT_GRANTED } from './browser-grants';
import { browserOptions } from './browser-options';
import { BrowserSessions } from './browser-sessions';
import { html, redirect, startTestSite, type TestSite } from './browser.testkit';
import { launchChromium } from './chromium-launcher';
import { WEBSOCKET_REFUSED } from './checked-traffic';
import type { ParsedBrowserActRequest } from './page-actions';

// Real: Chromium, Postgres (the payload store), HTTP sites on 127.0.0.1. Host names resolve
// through the resolver below only, so nothing outside loopback is ever contacted.
const INTERNAL_HOST = 'internal.example.test';
const UNGRANTED_HOST = 'ungranted.example.test';

describe(BrowserSessions.name, () => {
  let db: TestDatabase;
  let payloads: PostgresPayloadStore;
  let site: TestSite;
  let other: TestSite;
  let sut: BrowserSessions;
  const lookups: string[] = [];
  const resolveHost: HostResolver = async (hostname) => {
    lookups.push(hostname);
    if (hostname === INTERNAL_HOST) return [{ address: '10.0.0.1', family: 4 }];
    throw new Error(`no answer for ${hostname}`);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    payloads = new PostgresPayloadStore(db.pool);
    other = await startTestSite(() => ({ '/': html('<title>Other</title>other') }));
    site = await startTestSite((self) => ({
      '/': html(`<title>Home</title><h1 id="message">Hello from the test site</h1>
        <button id="change" onclick="document.getElementById('message').textContent = 'Clicked'">Change</button>
        <input id="name" oninput="document.getElementById('echo').textContent = 'Echo: ' + this.value"><p id="echo"></p>`),
      '/second': html('<title>Second</title>second page'),
      '/long': html(`<title>Long</title><p>${'é'.repeat(40_000)}</p>`),
      '/foreign': html(`<title>Foreign</title><img src="http://${UNGRANTED_HOST}/pixel.png"><script src="http://${UNGRANTED_HOST}/app.js"></script>content`),
      '/to-internal': redirect(`http://${INTERNAL_HOST}/secret`),
      '/to-other-port': redirect(`${other.origin}/`),
      '/to-second': redirect('/second', 302, { 'set-cookie': 'visited=yes; Path=/' }),
      '/loop': redirect('/loop'),
      '/popup': html(`<title>Popup</title><script>window.open('/second')</script>`),
      '/link': html('<title>Link</title><a id="go" href="/to-second">go</a>'),
      '/set-cookie': html('<title>Cookie</title><script>document.cookie = "script=1; path=/"</script>', { 'set-cookie': 'served=1; Path=/; HttpOnly' }),
      '/cookies': (request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Cookies</title><pre>cookie header: ${request.headers.cookie ?? 'none'}</pre>`);
      },
      '/fetches': html(`<title>Fetches</title><p id="out"></p><script>
        const out = document.getElementById('out');
        Promise.all([
          fetch('/api/moved').then((r) => r.text(), () => 'failed'),
          fetch('${other.origin}/').then((r) => r.text(), () => 'failed'),
          fetch('/api/away').then((r) => r.text(), () => 'failed'),
        ]).then((results) => { out.textContent = 'results: ' + results.join(' | '); });
      </script>`),
      '/api/moved': redirect('/api/data', 301),
      '/api/data': (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('same-origin data'),
      '/api/away': redirect(`${other.origin}/`),
      '/socket': html(`<title>Socket</title><p id="state"></p><script>
        const socket = new WebSocket('ws://127.0.0.1:${self.port}/live');
        socket.onclose = () => { document.getElementById('state').textContent = 'socket closed'; };
      </script>`),
      '/worker': html(`<title>Worker</title><p id="state"></p><script>
        const worker = new Worker('/worker.js');
        worker.onmessage = (event) => { document.getElementById('state').textContent = 'worker socket ' + event.data; };
      </script>`),
      '/worker.js': (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/javascript' }).end(`
          const socket = new WebSocket('ws://127.0.0.1:${self.port}/from-worker');
          socket.onopen = () => postMessage('opened');
          socket.onerror = () => postMessage('failed');`);
      },
      '/slow': () => undefined,
    }));
    sut = new BrowserSessions({ payloads, options: browserOptions({ allowPrivate: [`127.0.0.1:${site.port}`] }), resolveHost });
  });

  afterAll(async () => {
    await sut.closeAll();
    await site.close();
    await other.close();
    await db.drop();
  });

  beforeEach(() => {
    site.received.length = 0;
    other.received.length = 0;
    lookups.length = 0;
  });

  let runCounter = 0;
  const newRun = () => `run-${++runCounter}`;
  const granted = () => [site.origin, other.origin, `http://${INTERNAL_HOST}`];
  const act = (runId: string, fields: Partial<ParsedBrowserActRequest> & Pick<ParsedBrowserActRequest, 'action'>, on: BrowserSessions = sut): Promise<BrowserActResult> =>
    on.act({ workspaceId: 'ws1', runId, url: `${site.origin}/`, allowedUrls: granted(), timeoutMs: 10_000, ...fields });

  describe('actions', () => {
    it('navigates and answers the status, the URL and the title', async () => {
      const result = await act(newRun(), { action: 'navigate' });

      expect(result).toMatchObject({ ok: true, url: `${site.origin}/`, title: 'Home', status: 200, blocked: [], error: null });
    });

    it('reads the text of the current page, and loads the requested page first when it is another', async () => {
      const runId = newRun();
      await act(runId, { action: 'navigate' });

      const current = await act(runId, { action: 'read' });
      const elsewhere = await act(runId, { action: 'read', url: `${site.origin}/second` });

      expect(current).toMatchObject({ ok: true, status: null, text: expect.stringContaining('Hello from the test site') });
      expect(elsewhere).toMatchObject({ ok: true, url: `${site.origin}/second`, title: 'Second', status: 200, text: 'second page' });
    });

    it('bounds the text it reads to 32 KiB of UTF-8 without splitting a character', async () => {
      const result = await act(newRun(), { action: 'read', url: `${site.origin}/long` });

      expect(Buffer.byteLength(result.text!, 'utf8')).toBe(32 * 1024);
      expect(result.text).toBe('é'.repeat(16 * 1024));
    });

    it('clicks a button that changes the page', async () => {
      const runId = newRun();
      await act(runId, { action: 'navigate' });

      const clicked = await act(runId, { action: 'click', selector: '#change' });
      const read = await act(runId, { action: 'read' });

      expect(clicked).toMatchObject({ ok: true, title: 'Home', error: null });
      expect(read.text).toContain('Clicked');
    });

    it('types into an input the page echoes', async () => {
      const runId = newRun();

      const typed = await act(runId, { action: 'type', selector: '#name', text: 'Ada Lovelace' });
      const read = await act(runId, { action: 'read' });

      expect(typed).toMatchObject({ ok: true, status: 200, error: null });
      expect(read.text).toContain('Echo: Ada Lovelace');
    });

    it('stores a PNG screenshot as a payload whose bytes hash to the digest it answers', async () => {
      const result = await act(newRun(), { action: 'screenshot' });

      expect(result).toMatchObject({ ok: true, screenshot: { $payload: { mediaType: 'application/json' } }, screenshotSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const stored = (await payloads.getJson('ws1', result.screenshot!)) as { base64: string; mediaType: string };
      const png = Buffer.from(stored.base64, 'base64');
      expect(stored.mediaType).toBe('image/png');
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(createHash('sha256').update(png).digest('hex')).toBe(result.screenshotSha256);
    });

    it('answers a missing selector, a missing field and a timeout as failures of the action', async () => {
      const runId = newRun();
      // The page is loaded first, under the default limit: the short limits below are for the waits they name.
      expect(await act(runId, { action: 'navigate', url: `${site.origin}/` })).toMatchObject({ ok: true });

      const missing = await act(runId, { action: 'click', selector: '#absent', timeoutMs: 500 });
      const noText = await act(runId, { action: 'type', selector: '#name' });
      const slow = await act(runId, { action: 'navigate', url: `${site.origin}/slow`, timeoutMs: 500 });
      const unresolved = await act(runId, { action: 'navigate', url: `http://${UNGRANTED_HOST}/`, allowedUrls: [`http://${UNGRANTED_HOST}`] });

      expect(missing).toMatchObject({ ok: false, url: `${site.origin}/`, error: { code: 'selector_not_found', message: 'no element matches #absent' } });
      expect(noText).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
      expect(slow).toMatchObject({ ok: false, error: { code: 'timeout' } });
      expect(unresolved).toMatchObject({ ok: false, error: { code: 'navigation_failed', message: `could not resolve ${UNGRANTED_HOST}` }, blocked: [] });
    });
  });

  describe('what the page may reach', () => {
    it('refuses a navigation to a URL no grant covers without requesting it', async () => {
      const result = await act(newRun(), { action: 'navigate', url: `${site.origin}/`, allowedUrls: [`${site.origin}/second`] });

      expect(result).toMatchObject({ ok: false, error: { code: 'navigation_refused', message: `${site.origin}/: ${NOT_GRANTED}` } });
      expect(result.blocked).toEqual([{ url: `${site.origin}/`, reason: NOT_GRANTED, resourceType: 'document' }]);
      expect(site.received).toHaveLength(0);
    });

    it('blocks and records subresources of an origin no grant covers, and shows the page without them', async () => {
      const result = await act(newRun(), { action: 'read', url: `${site.origin}/foreign` });

      expect(result).toMatchObject({ ok: true, title: 'Foreign', text: 'content' });
      expect(result.blocked).toEqual(
        expect.arrayContaining([
          { url: `http://${UNGRANTED_HOST}/pixel.png`, reason: NOT_GRANTED, resourceType: 'image' },
          { url: `http://${UNGRANTED_HOST}/app.js`, reason: NOT_GRANTED, resourceType: 'script' },
        ]),
      );
      expect(lookups).not.toContain(UNGRANTED_HOST);
    });

    it('refuses a redirect to a host that resolves to a private address, without connecting', async () => {
      const result = await act(newRun(), { action: 'navigate', url: `${site.origin}/to-internal` });

      expect(result).toMatchObject({ ok: false, error: { code: 'navigation_refused', message: expect.stringContaining('10.0.0.1') } });
      expect(result.blocked).toEqual([
        { url: `http://${INTERNAL_HOST}/secret`, reason: `refusing to connect to 10.0.0.1 (${INTERNAL_HOST} resolves to it): private address`, resourceType: 'document' },
      ]);
      expect(lookups).toEqual([INTERNAL_HOST]);
    });

    it('refuses a redirect to a loopback port that is not allowlisted, although granted', async () => {
      const result = await act(newRun(), { action: 'navigate', url: `${site.origin}/to-other-port` });

      expect(result).toMatchObject({ ok: false, error: { code: 'navigation_refused' } });
      expect(result.blocked).toEqual([{ url: `${other.origin}/`, reason: expect.stringContaining('loopback address'), resourceType: 'document' }]);
      expect(other.received).toHaveLength(0);
    });

    it('follows a redirect of a navigation by checking its target like any request, keeping its cookies', async () => {
      const runId = newRun();

      const result = await act(runId, { action: 'navigate', url: `${site.origin}/to-second` });
      const cookies = await act(runId, { action: 'read', url: `${site.origin}/cookies` });

      expect(result).toMatchObject({ ok: true, url: `${site.origin}/second`, title: 'Second', status: 200, blocked: [] });
      expect(site.received.map((received) => received.path)).toEqual(['/to-second', '/second', '/cookies']);
      expect(cookies.text).toBe('cookie header: visited=yes');
    });

    it('follows the redirect of a navigation a click started', async () => {
      const runId = newRun();
      await act(runId, { action: 'navigate', url: `${site.origin}/link` });

      const result = await act(runId, { action: 'click', url: `${site.origin}/link`, selector: '#go' });

      expect(result).toMatchObject({ ok: true, url: `${site.origin}/second`, title: 'Second', status: 200 });
    });

    it('refuses a navigation that keeps redirecting once it passed 20 redirects', async () => {
      const result = await act(newRun(), { action: 'navigate', url: `${site.origin}/loop` });

      expect(result).toMatchObject({ ok: false, error: { code: 'navigation_refused', message: `${site.origin}/loop: more than 20 redirects` } });
      expect(site.received.filter((received) => received.path === '/loop')).toHaveLength(21);
    });

    it('follows a same-origin redirect of a fetch and refuses one to another origin', async () => {
      const runId = newRun();
      const blocked = (await act(runId, { action: 'navigate', url: `${site.origin}/fetches` })).blocked;

      const result = await eventually(async () => {
        const read = await act(runId, { action: 'read', url: `${site.origin}/fetches` });
        blocked.push(...read.blocked);
        return read.text?.startsWith('results:') && read;
      });

      // The second fetch is refused before anything connects: the other site's port is not allowlisted.
      expect(result.text).toBe('results: same-origin data | failed | failed');
      expect(blocked).toEqual(
        expect.arrayContaining([
          { url: `${other.origin}/`, reason: expect.stringContaining('loopback address'), resourceType: 'fetch' },
          { url: `${other.origin}/`, reason: 'a redirect of a subresource to another origin is not followed', resourceType: 'fetch' },
        ]),
      );
      expect(other.received).toHaveLength(0);
    });

    it('refuses a WebSocket of the page although its URL is granted, and records it', async () => {
      const runId = newRun();
      const blocked = (await act(runId, { action: 'navigate', url: `${site.origin}/socket` })).blocked;

      await eventually(async () => {
        const read = await act(runId, { action: 'read', url: `${site.origin}/socket` });
        blocked.push(...read.blocked);
        return read.text === 'socket closed';
      });

      expect(blocked).toEqual([{ url: `ws://127.0.0.1:${site.port}/live`, reason: WEBSOCKET_REFUSED, resourceType: 'websocket' }]);
      expect(site.upgrades).toBe(0);
    });

    it("fails a worker's WebSocket, which interception does not see, at the proxy that goes nowhere", async () => {
      const runId = newRun();
      await act(runId, { action: 'navigate', url: `${site.origin}/worker` });

      const result = await eventually(async () => {
        const read = await act(runId, { action: 'read', url: `${site.origin}/worker` });
        return read.text?.startsWith('worker socket') && read;
      });

      expect(result.text).toBe('worker socket failed');
      expect(site.upgrades).toBe(0);
    });
  });

  describe('contexts', () => {
    it("keeps one context per run: run A's cookies are not sent or visible in run B", async () => {
      const [a, b] = [newRun(), newRun()];
      await act(a, { action: 'navigate', url: `${site.origin}/set-cookie` });

      const inA = await act(a, { action: 'read', url: `${site.origin}/cookies` });
      const inB = await act(b, { action: 'read', url: `${site.origin}/cookies` });

      expect(inA.text).toBe('cookie header: served=1; script=1');
      expect(inB.text).toBe('cookie header: none');
    });

    it('closes a pop-up window and records it: a run has one page', async () => {
      const runId = newRun();
      const blocked = (await act(runId, { action: 'navigate', url: `${site.origin}/popup` })).blocked;

      await eventually(async () => {
        blocked.push(...(await act(runId, { action: 'read', url: `${site.origin}/popup` })).blocked);
        return blocked.length > 0;
      });

      expect(blocked).toEqual([{ url: expect.any(String), reason: 'pop-up windows are not opened: the run has one page', resourceType: 'popup' }]);
    });

    it("closes a run's context on close, which then starts afresh", async () => {
      const runId = newRun();
      await act(runId, { action: 'navigate', url: `${site.origin}/set-cookie` });
      const open = sut.openRuns;

      const closed = await sut.close({ workspaceId: 'ws1', runId });
      const again = await sut.close({ workspaceId: 'ws1', runId });

      expect(closed).toEqual({ closed: true });
      expect(again).toEqual({ closed: false });
      expect(sut.openRuns).toBe(open - 1);
      expect((await act(runId, { action: 'read', url: `${site.origin}/cookies` })).text).toBe('cookie header: none');
    });

    it('closes a context left idle for longer than the idle timeout', async () => {
      const idle = new BrowserSessions({ payloads, options: browserOptions({ allowPrivate: [`127.0.0.1:${site.port}`], idleTimeoutMs: 200 }), resolveHost });
      try {
        await act(newRun(), { action: 'navigate' }, idle);
        expect(idle.openRuns).toBe(1);

        await eventually(() => idle.openRuns === 0, { what: 'the idle context to close' });
      } finally {
        await idle.closeAll();
      }
    });

    it('starts Chromium again when it went away, for the next action', async () => {
      const launched: Browser[] = [];
      const crashing = new BrowserSessions({
        payloads,
        options: browserOptions({ allowPrivate: [`127.0.0.1:${site.port}`] }),
        resolveHost,
        launch: async (path) => {
          const browser = await launchChromium(path);
          launched.push(browser);
          return browser;
        },
      });
      try {
        const runId = newRun();
        await act(runId, { action: 'navigate' }, crashing);
        await launched[0]!.close();

        const result = await act(runId, { action: 'navigate', url: `${site.origin}/second` }, crashing);

        expect(result).toMatchObject({ ok: true, title: 'Second' });
        expect(launched).toHaveLength(2);
      } finally {
        await crashing.closeAll();
      }
    });

    it('answers browser_unavailable, naming what to install, when Chromium is missing', async () => {
      const missing = new BrowserSessions({ payloads, options: browserOptions({ chromiumPath: '/nonexistent/chromium' }) });

      const result = await act(newRun(), { action: 'navigate' }, missing);

      expect(result).toMatchObject({ ok: false, error: { code: 'browser_unavailable', message: expect.stringContaining('apt-get install chromium') } });
      expect(result.error!.message).toContain('PACKETAGENT_CHROMIUM');
      expect(await missing.availability()).toMatchObject({ available: false });
    });
  });

  describe('Chromium on its own', () => {
    it('connects nowhere: a context without interception fails at the proxy that goes nowhere', async () => {
      const browser = await launchChromium(browserOptions().chromiumPath);
      try {
        const page = await (await browser.newContext()).newPage();

        const error = await page.goto(`${site.origin}/`, { timeout: 5_000 }).catch((caught: unknown) => caught);

        expect(String(error)).toContain('net::ERR_PROXY_CONNECTION_FAILED');
        expect(site.received).toHaveLength(0);
      } finally {
        await browser.close();
      }
    });
  });
});
