import { localServer, type LocalServer } from '../testing/tools.testkit';
import { checkedStream } from './checked-stream';
import type { CheckedFetchRequest } from './checked-fetch';

async function readAll(body: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe(checkedStream.name, () => {
  let server: LocalServer;

  beforeAll(async () => {
    server = await localServer((request, response) => {
      const path = new URL(request.url, 'http://x').pathname;
      if (path === '/events') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: one\n\n');
        setImmediate(() => response.end('data: two\n\n'));
      } else if (path === '/declared') response.writeHead(200, { 'content-length': '4096' }).end('x'.repeat(4096));
      else if (path === '/chunked') {
        response.writeHead(200);
        response.write('x'.repeat(1000));
        setImmediate(() => response.end('x'.repeat(1000)));
      }
      else response.writeHead(404).end();
    });
  });
  afterAll(() => server.close());

  const request = (overrides: Partial<CheckedFetchRequest>): CheckedFetchRequest => ({
    url: `${server.origin}/events`,
    method: 'GET',
    headers: {},
    maxResponseBytes: 1024,
    timeoutMs: 5_000,
    allowPrivate: [`127.0.0.1:${server.port}`],
    ...overrides,
  });

  it('hands the body over as it arrives, with the head and the connected address', async () => {
    const sut = await checkedStream(request({}));

    expect(sut).toMatchObject({ status: 200, connectedAddress: '127.0.0.1', headers: { 'content-type': 'text/event-stream' } });
    expect(await readAll(sut.body)).toBe('data: one\n\ndata: two\n\n');
  });

  it('fails the body once it grows past the byte limit, and a response that declares more at once', async () => {
    const sut = await checkedStream(request({ url: `${server.origin}/chunked` }));

    // Both chunks may have arrived, and the body failed, by the time it is handed over.
    const failure = sut.body.errored ?? (await new Promise((resolve) => sut.body.once('error', resolve).resume()));
    expect(failure).toMatchObject({ code: 'response_too_large' });
    await expect(checkedStream(request({ url: `${server.origin}/declared` }))).rejects.toMatchObject({ code: 'response_too_large' });
  });

  it('refuses a loopback address that is not allowlisted, without connecting', async () => {
    server.received.length = 0;

    await expect(checkedStream(request({ allowPrivate: [] }))).rejects.toMatchObject({ code: 'destination_not_allowed' });
    expect(server.received).toHaveLength(0);
  });
});
