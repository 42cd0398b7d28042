import { takePrefetched } from './prefetch';

interface EarlyFetch {
  paths(pathname: string): string[];
  prefetch(pathname: string, fetcher: typeof fetch, now: number): { at: number; responses: Record<string, Promise<Response>> };
  held?: unknown;
}

// The classic script the page loads before the app; outside a browser it only defines itself.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../../early-fetch.js');
const sut = (globalThis as unknown as { paEarlyFetch: EarlyFetch }).paEarlyFetch;

describe('early fetch', () => {
  it('always asks for the caller and, on a workspace overview, for the overview', () => {
    expect(sut.paths('/sign-in')).toEqual(['/api/v1/auth/me']);
    expect(sut.paths('/w/ws_1/overview')).toEqual(['/api/v1/auth/me', '/api/v1/workspaces/ws_1/overview']);
    expect(sut.paths('/w/ws_1')).toEqual(['/api/v1/auth/me', '/api/v1/workspaces/ws_1/overview']);
    expect(sut.paths('/w/ws_1/runs')).toEqual(['/api/v1/auth/me']);
    expect(sut.paths('/w/../overview')).toEqual(['/api/v1/auth/me']);
  });
});

describe(takePrefetched.name, () => {
  afterEach(() => delete sut.held);

  it('hands out a prefetched answer once, and none when it is stale', async () => {
    const asked: string[] = [];
    const fetcher = ((path: string) => {
      asked.push(path);
      return Promise.resolve(new Response(JSON.stringify({ path })));
    }) as unknown as typeof fetch;

    sut.held = sut.prefetch('/w/ws_1/overview', fetcher, 1_000);

    expect(asked).toEqual(['/api/v1/auth/me', '/api/v1/workspaces/ws_1/overview']);
    const first = takePrefetched('/api/v1/auth/me', 2_000);
    expect(await (await first!).json()).toEqual({ path: '/api/v1/auth/me' });
    expect(takePrefetched('/api/v1/auth/me', 2_000)).toBeNull();
    expect(takePrefetched('/api/v1/workspaces/ws_1/overview', 60_000)).toBeNull();
  });

  it('hands out nothing when the page had no early script', () => {
    expect(takePrefetched('/api/v1/auth/me')).toBeNull();
  });
});
