import { gzipSync } from 'node:zlib';
import { eventually } from '@packetagent/testing';
import { ToolAbortedError } from '../../errors';
import { ToolRegistry } from '../../registry';
import { allowFor, contextFor, localServer, type LocalServer } from '../../testing/tools.testkit';
import type { HostResolver, ToolContext, ToolsConfig } from '../../tool.types';

const TOKEN = 'sk-live-0123456789abcdef';

describe('http_fetch', () => {
  let server: LocalServer;
  let other: LocalServer;
  const resolved: string[] = [];
  const answers: Record<string, string[]> = {};
  const resolveHost: HostResolver = async (hostname) => {
    resolved.push(hostname);
    const addresses = answers[hostname];
    if (!addresses) throw new Error(`no answer for ${hostname}`);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  beforeAll(async () => {
    server = await localServer((request, response) => {
      const path = new URL(request.url, 'http://x').pathname;
      if (path === '/hello') {
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-internal': 'hidden' }).end('hello world');
      } else if (path === '/echo') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: request.method, headers: request.headers, body: request.body }));
      } else if (path === '/redirect-metadata') {
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      } else if (path === '/redirect-other') {
        response.writeHead(301, { location: `${other.origin}/landing?token=abc` }).end();
      } else if (path === '/large') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(16 * 1024);
        for (let i = 0; i < 64; i++) response.write(chunk);
        response.end();
      } else if (path === '/large-declared') {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10 * 1024 * 1024) });
        response.write('x');
      } else if (path === '/gzip') {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('compressed text'));
      } else if (path === '/gzip-bomb') {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x61)));
      } else if (path === '/missing') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('no such thing');
      } else if (path === '/hang') {
        // Never answers: the caller's deadline or abort has to end the exchange.
      } else {
        response.writeHead(500).end();
      }
    });
    other = await localServer((_request, response) => response.writeHead(200).end('landed'));
  });

  afterAll(async () => {
    await server.close();
    await other.close();
  });

  beforeEach(() => {
    resolved.length = 0;
    server.received.length = 0;
    other.received.length = 0;
  });

  function registry(config: Partial<ToolsConfig> = {}): ToolRegistry {
    return new ToolRegistry({
      config: { httpAllowPrivate: [`127.0.0.1:${server.port}`, `127.0.0.1:${other.port}`], httpMaxResponseBytes: 256 * 1024, httpTimeoutMs: 5_000, ...config },
      resolveHost,
    });
  }

  async function fetchWith(sut: ToolRegistry, args: Record<string, unknown>, ctx: ToolContext = contextFor()) {
    const planned = sut.plan('call', 'http_fetch', args);
    return sut.execute(planned, allowFor(planned), ctx);
  }

  describe('destination checks', () => {
    it('refuses a loopback literal that is not allowlisted, without connecting', async () => {
      const outcome = await fetchWith(registry({ httpAllowPrivate: [] }), { url: `${server.origin}/hello` });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed' } });
      expect(outcome.error!.message).toContain('127.0.0.1: loopback');
      expect(server.received).toHaveLength(0);
    });

    it('refuses loopback however the URL spells it', async () => {
      const sut = registry({ httpAllowPrivate: [] });

      for (const url of [`http://0x7f.0.0.1:${server.port}/hello`, `http://2130706433:${server.port}/hello`, `http://127.1:${server.port}/hello`]) {
        await expect(fetchWith(sut, { url })).resolves.toMatchObject({ ok: false, error: { code: 'destination_not_allowed' } });
      }
      expect(server.received).toHaveLength(0);
    });

    it('refuses the cloud metadata address', async () => {
      const outcome = await fetchWith(registry(), { url: 'http://169.254.169.254/latest/meta-data/' });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed', message: expect.stringContaining('cloud metadata') } });
    });

    it('refuses the IPv6 loopback literal [::1]', async () => {
      const outcome = await fetchWith(registry(), { url: `http://[::1]:${server.port}/hello` });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed', message: expect.stringContaining('loopback') } });
      expect(server.received).toHaveLength(0);
    });

    it('refuses an IPv4-mapped IPv6 literal of a private address', async () => {
      const outcome = await fetchWith(registry(), { url: 'http://[::ffff:10.0.0.1]/' });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed', message: expect.stringContaining('ipv4Mapped') } });
    });

    it('refuses a host name that resolves to a private address', async () => {
      answers['internal.example.test'] = ['10.0.0.5'];

      const outcome = await fetchWith(registry(), { url: 'http://internal.example.test/admin' });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed' } });
      expect(outcome.error!.message).toBe('refusing to connect to 10.0.0.5 (internal.example.test resolves to it): private address');
    });

    it('refuses a host name when any one of its addresses is private', async () => {
      answers['mixed.example.test'] = ['93.184.216.34', 'fd00::1'];

      const outcome = await fetchWith(registry(), { url: 'https://mixed.example.test/' });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed', message: expect.stringContaining('fd00::1') } });
    });

    it('connects to the checked address and keeps the host name in the Host header', async () => {
      answers['service.example.test'] = ['127.0.0.1'];
      const sut = registry({ httpAllowPrivate: [`service.example.test:${server.port}`] });

      const outcome = await fetchWith(sut, { url: `http://service.example.test:${server.port}/echo` });

      expect(outcome.ok).toBe(true);
      expect(resolved).toEqual(['service.example.test']);
      expect(server.received[0]!.headers.host).toBe(`service.example.test:${server.port}`);
    });

    it('resolves once per call, so a changed answer between check and connect is never used', async () => {
      answers['rebind.example.test'] = ['127.0.0.1'];
      const sut = registry({ httpAllowPrivate: [`rebind.example.test:${server.port}`] });
      const rebinding: HostResolver = async (hostname) => {
        const first = await resolveHost(hostname);
        answers['rebind.example.test'] = ['169.254.169.254'];
        return first;
      };
      const pinned = new ToolRegistry({ config: sut.config, resolveHost: rebinding });

      const outcome = await fetchWith(pinned, { url: `http://rebind.example.test:${server.port}/hello` });

      expect(outcome).toMatchObject({ ok: true, output: { status: 200, body: 'hello world' } });
      expect(resolved).toEqual(['rebind.example.test']);
    });
  });

  describe('redirects', () => {
    it('refuses a redirect to the metadata address and names the Location', async () => {
      const outcome = await fetchWith(registry(), { url: `${server.origin}/redirect-metadata` });

      expect(outcome).toMatchObject({
        ok: false,
        error: { code: 'redirect_refused', message: expect.stringContaining('http://169.254.169.254/latest/meta-data/') },
        output: { details: { status: 302, location: 'http://169.254.169.254/latest/meta-data/' } },
      });
      expect(server.received).toHaveLength(1);
      expect(resolved).toEqual([]);
    });

    it('never contacts the redirect target, even an allowlisted one', async () => {
      const outcome = await fetchWith(registry(), { url: `${server.origin}/redirect-other` });

      expect(outcome.error?.code).toBe('redirect_refused');
      expect(outcome.error!.message).toContain(`${other.origin}/landing?token=***`);
      expect(other.received).toHaveLength(0);
    });
  });

  describe('responses', () => {
    it('returns status, the content-type and the body from an allowlisted local server', async () => {
      const outcome = await fetchWith(registry(), { url: `${server.origin}/hello` });

      expect(outcome).toEqual({
        ok: true,
        output: { status: 200, statusText: 'OK', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'hello world', truncated: false, bytes: 11 },
        summary: `GET ${server.origin}/hello -> 200 (11 bytes)`,
      });
    });

    it('answers http_error with the body for a 4xx status', async () => {
      const outcome = await fetchWith(registry(), { url: `${server.origin}/missing` });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'http_error', message: 'the server answered 404 Not Found' }, output: { status: 404, body: 'no such thing' } });
    });

    it('decodes a gzip body', async () => {
      const outcome = await fetchWith(registry(), { url: `${server.origin}/gzip` });

      expect(outcome).toMatchObject({ ok: true, output: { body: 'compressed text' } });
    });

    it('cuts the body shown to the model at 32 KiB and flags it', async () => {
      const outcome = await fetchWith(registry({ httpMaxResponseBytes: 2 * 1024 * 1024 }), { url: `${server.origin}/large` });

      expect(outcome).toMatchObject({ ok: true, output: { truncated: true, bytes: 1024 * 1024 } });
      expect((outcome.output as { body: string }).body).toHaveLength(32 * 1024);
    });

    it('closes the connection with response_too_large when a streamed body passes the cap', async () => {
      const outcome = await fetchWith(registry({ httpMaxResponseBytes: 64 * 1024 }), { url: `${server.origin}/large` });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'response_too_large', message: expect.stringContaining('65536 bytes') } });
    });

    it('refuses a declared length over the cap before reading it', async () => {
      const outcome = await fetchWith(registry({ httpMaxResponseBytes: 64 * 1024 }), { url: `${server.origin}/large-declared` });

      expect(outcome.error?.code).toBe('response_too_large');
    });

    it('caps the decoded size of a compressed body', async () => {
      const outcome = await fetchWith(registry({ httpMaxResponseBytes: 1024 * 1024 }), { url: `${server.origin}/gzip-bomb` });

      expect(outcome.error?.code).toBe('response_too_large');
    });

    it('answers timeout when the server does not answer in time', async () => {
      const started = Date.now();

      const outcome = await fetchWith(registry({ httpTimeoutMs: 300 }), { url: `${server.origin}/hang` });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'timeout', message: 'no complete answer within 300 ms' } });
      expect(Date.now() - started).toBeLessThan(3_000);
    });

    it('throws ToolAbortedError when the call is aborted mid-request', async () => {
      const controller = new AbortController();
      const sut = registry();
      const planned = sut.plan('call', 'http_fetch', { url: `${server.origin}/hang` });

      const running = sut.execute(planned, allowFor(planned), contextFor({ signal: controller.signal }));
      await eventually(() => server.received.length === 1, { what: 'the request to arrive' });
      controller.abort(new Error('run cancelled'));

      await expect(running).rejects.toThrow(ToolAbortedError);
    });
  });

  describe('request headers', () => {
    it('sends the Idempotency-Key on mutating requests and the JSON body', async () => {
      const outcome = await fetchWith(registry(), { url: `${server.origin}/echo`, method: 'POST', body: { amount: 5 } }, contextFor({ idempotencyKey: 'key-123' }));

      expect(outcome.ok).toBe(true);
      expect(server.received[0]).toMatchObject({ method: 'POST', body: '{"amount":5}', headers: { 'idempotency-key': 'key-123', 'content-type': 'application/json' } });
    });

    it('sends no Idempotency-Key on a GET', async () => {
      await fetchWith(registry(), { url: `${server.origin}/echo` });

      expect(server.received[0]!.headers).not.toHaveProperty('idempotency-key');
    });

    it('puts a bearer credential in the Authorization header and nowhere in the outcome', async () => {
      const outcome = await fetchWith(
        registry(),
        { url: `${server.origin}/echo`, auth: { credential: 'api_token', scheme: 'bearer' } },
        contextFor({ credentials: { api_token: TOKEN } }),
      );

      expect(server.received[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(outcome.ok).toBe(true);
      expect(JSON.stringify(outcome)).not.toContain(TOKEN);
      expect(JSON.stringify(outcome)).toContain('Bearer ***');
    });

    it('puts a credential in a named header and basic credentials base64-encoded, never echoing either', async () => {
      const sut = registry();
      const custom = await fetchWith(sut, { url: `${server.origin}/echo`, auth: { credential: 'api_key', scheme: 'header', header: 'X-Api-Key' } }, contextFor({ credentials: { api_key: TOKEN } }));
      const basic = await fetchWith(sut, { url: `${server.origin}/echo`, auth: { credential: 'login', scheme: 'basic' } }, contextFor({ credentials: { login: `robot:${TOKEN}` } }));

      expect(server.received[0]!.headers['x-api-key']).toBe(TOKEN);
      expect(server.received[1]!.headers.authorization).toBe(`Basic ${Buffer.from(`robot:${TOKEN}`).toString('base64')}`);
      expect(JSON.stringify(custom)).not.toContain(TOKEN);
      expect(JSON.stringify(basic)).not.toContain(Buffer.from(`robot:${TOKEN}`).toString('base64'));
    });

    it('answers credential_unavailable without contacting the server when the credential is missing', async () => {
      const outcome = await fetchWith(registry(), { url: `${server.origin}/echo`, auth: { credential: 'api_token', scheme: 'bearer' } });

      expect(outcome).toMatchObject({ ok: false, error: { code: 'credential_unavailable', message: 'the credential "api_token" was not provided for this call' } });
      expect(server.received).toHaveLength(0);
    });
  });
});
