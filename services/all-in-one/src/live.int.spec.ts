import { PostgresEventStore } from '@packetagent/eventstore';
import { runStreamId, type EventEnvelope } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { bearer, startTestApp, type TestApp } from './testing/app.testkit';
import { SseClient } from './testing/sse-client.testkit';

const WORKER = `apiVersion: packetagent/v1
kind: Worker
name: live-feed
model: { provider: scripted, model: live-feed }
instructions: Do the task.
tools: []
bounds: { maxConcurrentRuns: 100 }
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;

/** Run events carried by the stream's frames (those with an id). */
function eventsOf(client: SseClient): EventEnvelope[] {
  return client.frames.filter((frame) => frame.id !== undefined).map((frame) => JSON.parse(frame.data!) as EventEnvelope);
}

const ACTOR = { kind: 'system' as const, id: 'live-test' };

describe('run events and live streams', () => {
  let sut: TestApp;
  let ws: string;
  let owner: string;
  let viewer: string;
  let outsider: string;
  let deploymentId: string;
  let store: PostgresEventStore;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    sut = await startTestApp({ PACKETAGENT_SSE_HEARTBEAT_MS: '1000' });
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: sut.setupToken, email: 'live@example.com', password: 'correct horse battery staple', workspace: 'Live' },
    });
    ws = setup.body.workspaceId;
    owner = setup.body.apiKey;
    viewer = (await sut.request<{ secret: string }>('POST', api('/api-keys'), { body: { name: 'viewer', role: 'viewer' }, headers: bearer(owner) })).body.secret;
    const session = await signIn();
    const other = await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    outsider = (await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other.body.id}/api-keys`, { body: { name: 'o', role: 'owner' }, headers: session })).body.secret;
    const worker = await sut.request<{ id: string }>('POST', api('/workers'), { body: { name: 'live-feed' }, headers: bearer(owner) });
    const version = await sut.request('POST', api(`/workers/${worker.body.id}/versions`), { raw: WORKER, headers: { ...bearer(owner), 'content-type': 'application/yaml' } });
    expect(version.status).toBe(201);
    const deployment = await sut.request<{ id: string }>('POST', api('/deployments'), { body: { workerId: worker.body.id, acceptMissing: true }, headers: bearer(owner) });
    expect(deployment.status).toBe(201);
    deploymentId = deployment.body.id;
    store = sut.app.get(PostgresEventStore);
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(() => sut.close());

  function api(path: string): string {
    return `/api/v1/workspaces/${ws}${path}`;
  }

  async function signIn(): Promise<Record<string, string>> {
    const login = await sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'live@example.com', password: 'correct horse battery staple' } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
    return { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
  }

  async function startRun(): Promise<string> {
    const answer = await sut.request<{ runId: string }>('POST', api(`/deployments/${deploymentId}/runs`), { body: { input: {} }, headers: bearer(owner) });
    expect(answer.status).toBe(201);
    return answer.body.runId;
  }

  /** Appends `count` events to the run's stream, one append each, as the supervisor would. */
  async function append(runId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      await store.append(runStreamId(runId), 'any', [{ type: 'run.compacted', data: { droppedMessages: 1, estimatedTokens: i }, actor: ACTOR }], { workspaceId: ws });
    }
  }

  async function positions(where: string, params: unknown[]): Promise<number[]> {
    const { rows } = await sut.db.pool.query<{ p: string }>(`SELECT global_position AS p FROM events WHERE ${where} ORDER BY global_position`, params);
    return rows.map((row) => Number(row.p));
  }

  async function open(path: string, headers: Record<string, string>): Promise<SseClient> {
    const client = await SseClient.open(`${sut.baseUrl}${path}`, headers);
    streams.push(client);
    return client;
  }

  const received = (client: SseClient, count: number, what: string) =>
    eventually(() => eventsOf(client).length >= count && eventsOf(client), { what: `${count} ${what}`, timeoutMs: 10_000 });

  describe('GET /runs/{runId}/events', () => {
    it('pages a run completely and without duplicates while the run keeps appending', async () => {
      const runId = await startRun();
      await append(runId, 10);
      const appending = append(runId, 40);

      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { items: Array<{ streamVersion: number; position: number; type: string; id: string }>; nextCursor: string | null } } =
          await sut.request('GET', api(`/runs/${runId}/events?limit=7${cursor ? `&after=${cursor}` : ''}`), { headers: bearer(viewer) });
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((item) => item.streamVersion));
        cursor = page.body.nextCursor;
      } while (cursor);
      await appending;

      expect(seen.length).toBeGreaterThanOrEqual(11);
      expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
      const rest = await sut.request<{ items: unknown[] }>('GET', api(`/runs/${runId}/events?limit=1000`), { headers: bearer(viewer) });
      expect(rest.body.items).toHaveLength(51);
    });

    it('answers each event with its id, position, type, version, time, actor and data', async () => {
      const runId = await startRun();
      await append(runId, 1);

      const page = await sut.request<{ items: Array<Record<string, unknown>>; nextCursor: string | null }>('GET', api(`/runs/${runId}/events`), { headers: bearer(viewer) });

      expect(page.body.nextCursor).toBeNull();
      expect(page.body.items[1]).toEqual({
        id: expect.any(String),
        position: expect.any(Number),
        type: 'run.compacted',
        streamVersion: 2,
        occurredAt: expect.any(String),
        actor: ACTOR,
        data: { droppedMessages: 1, estimatedTokens: 0 },
      });
    });

    it('refuses a cursor it did not issue, and answers 404 for another workspace and for unknown runs', async () => {
      const runId = await startRun();

      expect((await sut.request('GET', api(`/runs/${runId}/events?after=bm9wZQ`), { headers: bearer(viewer) })).status).toBe(400);
      expect((await sut.request('GET', api(`/runs/${runId}/events`), { headers: bearer(outsider) })).status).toBe(404);
      expect((await sut.request('GET', api('/runs/no-such-run/events'), { headers: bearer(viewer) })).status).toBe(404);
      expect((await sut.request('GET', api(`/runs/${runId}/events`))).status).toBe(401);
    });
  });

  describe('GET /runs (served by intake)', () => {
    it('pages the runs list completely and without duplicates while new runs are created', async () => {
      const before = [];
      for (let i = 0; i < 12; i++) before.push(await startRun());
      const creating = (async () => {
        for (let i = 0; i < 8; i++) await startRun();
      })();

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { items: Array<{ id: string }>; nextCursor: string | null } } = await sut.request(
          'GET',
          api(`/runs?deploymentId=${deploymentId}&limit=5${cursor ? `&cursor=${cursor}` : ''}`),
          { headers: bearer(viewer) },
        );
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((item) => item.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      await creating;

      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expect.arrayContaining(before));
    });
  });

  describe('SSE', () => {
    it('replays a run, delivers live events, and after a reconnect with Last-Event-ID loses and repeats nothing', async () => {
      const runId = await startRun();
      const otherRun = await startRun();
      await append(runId, 3);

      const first = await open(api(`/runs/${runId}/events/stream`), bearer(viewer));
      expect(first.status).toBe(200);
      expect(first.contentType).toContain('text/event-stream');
      await received(first, 4, 'replayed events');
      await Promise.all([append(runId, 3), append(otherRun, 3)]);
      const live = await received(first, 7, 'live events');
      first.close();
      await append(runId, 3);

      const lastId = live[live.length - 1]!.globalPosition;
      const second = await open(api(`/runs/${runId}/events/stream`), { ...bearer(viewer), 'last-event-id': String(lastId) });
      await received(second, 3, 'events appended while disconnected');
      await append(runId, 2);
      await received(second, 5, 'live events after the reconnect');

      const all = [...live, ...eventsOf(second)].map((event) => event.globalPosition);
      expect(all).toEqual(await positions('stream_id = $1', [runStreamId(runId)]));
      expect(second.frames.filter((frame) => frame.id !== undefined).every((frame, i) => frame.event === eventsOf(second)[i]!.type && frame.id === String(eventsOf(second)[i]!.globalPosition))).toBe(true);
    });

    it('streams the whole workspace to a signed-in user from ?lastEventId=', async () => {
      const runId = await startRun();
      const [from] = await positions('stream_id = $1', [runStreamId(runId)]);
      await append(runId, 2);
      const cookie = await signIn();

      const stream = await open(api(`/events/stream?lastEventId=${from}`), { cookie: cookie['cookie']! });
      const expected = await positions('workspace_id = $1 AND global_position > $2', [ws, from]);
      const replayed = await received(stream, expected.length, 'replayed workspace events');

      expect(replayed.map((event) => event.globalPosition)).toEqual(expected);
      const another = await startRun();
      const after = await eventually(() => eventsOf(stream).find((event) => event.stream === runStreamId(another)), { what: 'the new run live' });
      expect(after.type).toBe('run.admitted');
    });

    it('writes heartbeat comments on an idle stream', async () => {
      const stream = await open(api('/events/stream'), bearer(viewer));

      await eventually(() => stream.frames.some((frame) => frame.comment === 'heartbeat'), { what: 'a heartbeat', timeoutMs: 5_000 });
    });

    it('tells open streams why when the server stops, then ends them', async () => {
      const replica = await startTestApp({}, sut);
      try {
        const stream = await SseClient.open(`${replica.baseUrl}${api('/events/stream')}`, bearer(viewer));
        streams.push(stream);
        await eventually(() => stream.frames.some((frame) => frame.comment === 'connected'), { what: 'the stream to open' });

        await replica.stop();

        await eventually(() => stream.ended, { what: 'the stream to end' });
        const closing = stream.frames.find((frame) => frame.event === 'closing');
        expect(JSON.parse(closing!.data!)).toMatchObject({ reason: 'shutting_down' });
      } finally {
        await replica.close();
      }
    });

    it('refuses another workspace with 404, no key with 401 and a malformed Last-Event-ID with 400', async () => {
      const runId = await startRun();

      const foreign = await open(api(`/runs/${runId}/events/stream`), bearer(outsider));
      const unknown = await open(api('/runs/no-such-run/events/stream'), bearer(viewer));
      const anonymous = await open(api('/events/stream'), {});
      const malformed = await open(api('/events/stream'), { ...bearer(viewer), 'last-event-id': 'yesterday' });

      expect([foreign.status, unknown.status, anonymous.status, malformed.status]).toEqual([404, 404, 401, 400]);
      expect(anonymous.contentType).toContain('application/problem+json');
    });

    it('caps open streams per workspace and frees a slot when a stream closes', async () => {
      const opened = await Promise.all(Array.from({ length: 50 }, () => open(api('/events/stream'), bearer(viewer))));
      expect(opened.every((client) => client.status === 200)).toBe(true);

      const refused = await open(api('/events/stream'), bearer(viewer));
      expect(refused.status).toBe(429);

      opened[0]!.close();
      await eventually(async () => {
        const retry = await open(api('/events/stream'), bearer(viewer));
        return retry.status === 200;
      }, { what: 'a freed slot' });
    });
  });
});
