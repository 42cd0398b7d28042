import { bearer, startTestApp, type TestApp } from './testing/app.testkit';
import { malformedRequests, type MalformedRequest, type OpenApiDocument } from './testing/malformed-requests.testkit';
import { sendRaw, type RawAnswer } from './testing/raw-http.testkit';

const CONCURRENCY = 6;
/** An error answer lists a bounded number of issues: a few KB, whatever the request held. */
const MAX_ERROR_BYTES = 8 * 1024;
const A_PLAUSIBLE_ID = '0190d6b8-7a2e-7c3d-8e4f-5a6b7c8d9e0f';

interface Outcome {
  request: MalformedRequest;
  answer: RawAnswer;
}

function withBody(request: MalformedRequest, path: string, headers: Record<string, string>): Buffer {
  const body = typeof request.body === 'string' ? Buffer.from(request.body) : (request.body ?? Buffer.alloc(0));
  const lines = Object.entries({ ...headers, ...request.headers, 'content-length': String(body.length) }).map(([name, value]) => `${name}: ${value}\r\n`);
  return Buffer.concat([Buffer.from(`${request.method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('')}Connection: close\r\n\r\n`, 'latin1'), body]);
}

async function send(sut: TestApp, port: number, request: MalformedRequest, auth: Record<string, string>): Promise<RawAnswer> {
  if (request.raw) return sendRaw(port, request.raw(request.path, auth));
  // fetch sends no body with GET; the socket does.
  if (request.body !== undefined && request.method === 'GET') return sendRaw(port, withBody(request, request.path, auth));
  const response = await fetch(`${sut.baseUrl}${request.path}`, {
    method: request.method,
    headers: { ...auth, ...request.headers },
    body: request.body,
    signal: AbortSignal.timeout(15_000),
  });
  const headers = Object.fromEntries(response.headers.entries());
  // A stream that opened is an answer too; its body never ends.
  if (headers['content-type']?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, headers, text: '' };
  }
  return { status: response.status, headers, text: await response.text() };
}

function verdict({ request, answer }: Outcome): string | null {
  const where = `${request.operation} [${request.what}] -> ${answer.status}`;
  if (answer.status >= 500) return `${where}: ${answer.text.slice(0, 200)}`;
  if (answer.status < 400) return null;
  if (!answer.headers['content-type']?.startsWith('application/problem+json')) return `${where}: content-type ${answer.headers['content-type']}: ${answer.text.slice(0, 200)}`;
  if (Buffer.byteLength(answer.text) > MAX_ERROR_BYTES) return `${where}: an error body of ${Buffer.byteLength(answer.text)} bytes`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    return `${where}: not JSON: ${answer.text.slice(0, 200)}`;
  }
  const wellFormed =
    typeof body['type'] === 'string' && typeof body['title'] === 'string' && body['status'] === answer.status && typeof body['code'] === 'string' && /^[a-z0-9_]+$/.test(body['code']);
  return wellFormed ? null : `${where}: not a problem document: ${answer.text.slice(0, 200)}`;
}

async function inPool<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

describe('the API under malformed requests', () => {
  let sut: TestApp;
  let admin: string;
  let ws: string;

  beforeAll(async () => {
    // As deployed: the supervisor answers its own routes (run supervision, release), and a public URL enables passkeys.
    sut = await startTestApp({ PACKETAGENT_SUPERVISOR_ENABLED: 'true', PACKETAGENT_PUBLIC_URL: 'http://localhost:8080' });
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: sut.setupToken, email: 'owner@example.com', password: 'correct horse battery staple', workspace: 'Fuzz' },
    });
    ws = setup.body.workspaceId;
    const created = await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { body: { name: 'fuzz-admin', role: 'admin' }, headers: bearer(setup.body.apiKey) });
    expect(created.status).toBe(201);
    admin = created.body.secret;
  });
  afterAll(() => sut?.close());

  it('answers every malformed request derived from the OpenAPI document with a 4xx problem+json, never a 5xx', async () => {
    const document = (await sut.request<OpenApiDocument>('GET', '/api/v1/openapi.json')).body;
    const requests = malformedRequests(document, { ws }, A_PLAUSIBLE_ID);
    const perOperation = new Map<string, number>();
    for (const request of requests) perOperation.set(request.operation, (perOperation.get(request.operation) ?? 0) + 1);
    const port = Number(new URL(sut.baseUrl).port);

    // As an API client asks: a route that can answer a browser with a page answers it problem+json.
    const common = { ...bearer(admin), accept: 'application/json' };
    const outcomes = await inPool(requests, CONCURRENCY, async (request) => ({ request, answer: await send(sut, port, request, common) }));

    expect(perOperation.size).toBeGreaterThanOrEqual(40);
    expect([...perOperation].filter(([, count]) => count < 20)).toEqual([]);
    expect(outcomes.map(verdict).filter((failure) => failure !== null)).toEqual([]);
  }, 120_000);
});
