import { localServer, type LocalServer } from '../testing/tools.testkit';
import type { HostResolver } from '../tool.types';
import { checkedFetch, CheckedFetchError, type CheckedFetchRequest } from './checked-fetch';

describe(checkedFetch.name, () => {
  let server: LocalServer;
  const lookups: string[] = [];
  const answers: Record<string, string[]> = {};
  const resolveHost: HostResolver = async (hostname) => {
    lookups.push(hostname);
    const addresses = answers[hostname];
    if (!addresses) throw new Error(`no answer for ${hostname}`);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  beforeAll(async () => {
    server = await localServer((request, response) => {
      const path = new URL(request.url, 'http://x').pathname;
      if (path === '/hello') response.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] }).end('hello');
      else if (path === '/echo') response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ method: request.method, host: request.headers.host, custom: request.headers['x-custom'], body: request.body }));
      else if (path === '/moved') response.writeHead(302, { location: '/hello' }).end('moved');
      else if (path === '/large') response.writeHead(200).end('x'.repeat(4096));
      else if (path === '/hang') return;
      else response.writeHead(404).end();
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.received.length = 0;
    lookups.length = 0;
  });

  const request = (overrides: Partial<CheckedFetchRequest>): CheckedFetchRequest => ({
    url: `${server.origin}/hello`,
    method: 'GET',
    headers: {},
    maxResponseBytes: 1024,
    timeoutMs: 5_000,
    allowPrivate: [`127.0.0.1:${server.port}`],
    resolveHost,
    ...overrides,
  });

  it('answers status, headers, body and the connected address for an allowlisted private destination', async () => {
    const sut = await checkedFetch(request({}));

    expect(sut).toMatchObject({ status: 200, connectedAddress: '127.0.0.1', headers: { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] } });
    expect(sut.body.toString('utf8')).toBe('hello');
  });

  it('sends the method, headers and body it is given', async () => {
    const sut = await checkedFetch(request({ url: `${server.origin}/echo`, method: 'POST', headers: { 'x-custom': 'yes' }, body: Buffer.from('payload') }));

    expect(sut.status).toBe(201);
    expect(JSON.parse(sut.body.toString('utf8'))).toEqual({ method: 'POST', host: `127.0.0.1:${server.port}`, custom: 'yes', body: 'payload' });
  });

  it('refuses a loopback address that is not allowlisted, without connecting', async () => {
    const error = await checkedFetch(request({ allowPrivate: [] })).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(CheckedFetchError);
    expect(error).toMatchObject({ code: 'destination_not_allowed', message: expect.stringContaining('loopback') });
    expect(server.received).toHaveLength(0);
  });

  it('refuses a host name when any one of its addresses is private', async () => {
    answers['mixed.example.test'] = ['93.184.215.14', '10.0.0.1'];

    await expect(checkedFetch(request({ url: 'http://mixed.example.test/' }))).rejects.toMatchObject({
      code: 'destination_not_allowed',
      message: expect.stringContaining('10.0.0.1 (mixed.example.test resolves to it)'),
    });
  });

  it('resolves once and connects to the checked address, keeping the host name in the Host header', async () => {
    answers['site.example.test'] = ['127.0.0.1'];

    const sut = await checkedFetch(request({ url: `http://site.example.test:${server.port}/echo`, allowPrivate: [`site.example.test:${server.port}`] }));

    expect(lookups).toEqual(['site.example.test']);
    expect(sut.connectedAddress).toBe('127.0.0.1');
    expect(JSON.parse(sut.body.toString('utf8'))).toMatchObject({ host: `site.example.test:${server.port}` });
  });

  it('answers a redirect as it is, without following it', async () => {
    const sut = await checkedFetch(request({ url: `${server.origin}/moved` }));

    expect(sut).toMatchObject({ status: 302, headers: { location: '/hello' } });
    expect(sut.body).toHaveLength(0);
    expect(server.received.map((received) => received.url)).toEqual(['/moved']);
  });

  it('fails a response above the byte limit', async () => {
    await expect(checkedFetch(request({ url: `${server.origin}/large` }))).rejects.toMatchObject({ code: 'response_too_large' });
  });

  it('fails with timeout when no answer comes in time, and with aborted when the caller aborts', async () => {
    await expect(checkedFetch(request({ url: `${server.origin}/hang`, timeoutMs: 200 }))).rejects.toMatchObject({ code: 'timeout' });

    const controller = new AbortController();
    const pending = checkedFetch(request({ url: `${server.origin}/hang`, signal: controller.signal }));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'aborted' });
  });

  it('fails with dns_failed when the host does not resolve', async () => {
    await expect(checkedFetch(request({ url: 'http://unknown.example.test/' }))).rejects.toMatchObject({ code: 'dns_failed' });
  });

  it('refuses a URL that is not http(s) or that carries credentials', async () => {
    await expect(checkedFetch(request({ url: 'ftp://127.0.0.1/' }))).rejects.toMatchObject({ code: 'invalid_url' });
    await expect(checkedFetch(request({ url: `http://user:secret@127.0.0.1:${server.port}/hello` }))).rejects.toMatchObject({ code: 'invalid_url' });
    await expect(checkedFetch(request({ url: 'not a url' }))).rejects.toMatchObject({ code: 'invalid_url' });
    expect(server.received).toHaveLength(0);
  });
});
