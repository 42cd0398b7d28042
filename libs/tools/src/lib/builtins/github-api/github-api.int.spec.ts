import { ToolRegistry } from '../../registry';
import { allowFor, contextFor, localServer, type LocalServer } from '../../testing/tools.testkit';

const TOKEN = 'ghp_0123456789abcdefghij';

describe('github_api', () => {
  let github: LocalServer;

  beforeAll(async () => {
    github = await localServer((request, response) => {
      const json = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
      if (request.method === 'POST' && request.url === '/repos/acme/widgets/issues') json(201, { number: 42, title: JSON.parse(request.body).title });
      else if (request.url === '/repos/acme/widgets/issues?state=open') json(200, [{ number: 1 }, { number: 2 }]);
      else if (request.url === '/repos/acme/moved') response.writeHead(301, { location: 'http://169.254.169.254/' }).end();
      else if (request.url === '/repos/acme/huge') json(200, { blob: 'x'.repeat(512 * 1024) });
      else json(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    });
  });

  afterAll(() => github.close());

  beforeEach(() => {
    github.received.length = 0;
  });

  const sut = (maxBytes = 5 * 1024 * 1024) => new ToolRegistry({ config: { githubBaseUrl: github.origin, httpMaxResponseBytes: maxBytes } });

  async function call(registry: ToolRegistry, args: Record<string, unknown>) {
    const planned = registry.plan('call', 'github_api', { credential: 'github_token', ...args });
    return registry.execute(planned, allowFor(planned), contextFor({ credentials: { github_token: TOKEN } }));
  }

  it('sends the request with the token to the configured base URL and returns the JSON answer', async () => {
    const outcome = await call(sut(), { method: 'POST', path: '/repos/acme/widgets/issues', body: { title: 'Flaky test' } });

    expect(outcome).toEqual({ ok: true, output: { status: 201, data: { number: 42, title: 'Flaky test' }, truncated: false }, summary: 'POST /repos/acme/widgets/issues -> 201' });
    expect(github.received).toHaveLength(1);
    expect(github.received[0]).toMatchObject({ method: 'POST', url: '/repos/acme/widgets/issues', headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json; charset=utf-8' } });
    expect(JSON.parse(github.received[0]!.body)).toEqual({ title: 'Flaky test' });
  });

  it('passes the query through', async () => {
    const outcome = await call(sut(), { method: 'GET', path: '/repos/acme/widgets/issues?state=open' });

    expect(outcome).toMatchObject({ ok: true, output: { status: 200, data: [{ number: 1 }, { number: 2 }] } });
  });

  it('answers github_error with GitHub\'s message for an error status', async () => {
    const outcome = await call(sut(), { method: 'GET', path: '/repos/acme/missing' });

    expect(outcome).toMatchObject({ ok: false, error: { code: 'github_error', message: 'GitHub answered 404: Not Found' }, output: { status: 404 } });
    expect(JSON.stringify(outcome)).not.toContain(TOKEN);
  });

  it('refuses to follow a redirect', async () => {
    const outcome = await call(sut(), { method: 'GET', path: '/repos/acme/moved' });

    expect(outcome).toMatchObject({ ok: false, error: { code: 'redirect_refused' }, output: { details: { status: 301, location: 'http://169.254.169.254/' } } });
    expect(github.received).toHaveLength(1);
  });

  it('answers response_too_large past the response cap', async () => {
    const outcome = await call(sut(64 * 1024), { method: 'GET', path: '/repos/acme/huge' });

    expect(outcome.error?.code).toBe('response_too_large');
  });

  it('cuts a large answer for the model and flags it', async () => {
    const outcome = await call(sut(), { method: 'GET', path: '/repos/acme/huge' });

    expect(outcome).toMatchObject({ ok: true, output: { truncated: true } });
    expect((outcome.output as { data: string }).data).toHaveLength(32 * 1024);
  });

  it('refuses paths that leave the API path space before anything runs', () => {
    const registry = sut();

    expect(() => registry.plan('c', 'github_api', { method: 'GET', path: 'https://evil.example.com/x', credential: 'gh' })).toThrow(/path: must be an API path/);
    expect(() => registry.plan('c', 'github_api', { method: 'GET', path: '/repos/../user', credential: 'gh' })).toThrow(/dot segments/);
    expect(() => registry.plan('c', 'github_api', { method: 'GET', path: '/repos/{owner}/x', credential: 'gh' })).toThrow(/placeholders/);
  });
});
