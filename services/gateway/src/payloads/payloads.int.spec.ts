import { canonicalJson, EventRegistry, registerRunExecutionEvents, sha256Hex, verifyEvidenceBundle, type AuditReport, type EvidenceBundle, type JsonValue, type PayloadRef } from '@packetagent/contracts';
import { PayloadStore, PostgresEventStore } from '@packetagent/eventstore';
import { AuditRoutesModule } from '../audit/audit-routes.module';
import { LiveRoutesModule } from '../live/live-routes.module';
import { completeSetup, signIn, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { PayloadsController } from './payloads.controller';
import { PAGE_INLINE_BYTES } from './inline-payloads';

const RUN = '0193b000-0000-7000-8000-0000000000a1';
const actor = { kind: 'service', id: 'supervisor' } as const;

const toolResult = (output: JsonValue, callId = 'c1') => ({ callId, tool: 'http_fetch', ok: true, output, summary: '200 OK', executed: true });

interface EventsPage {
  items: Array<{ streamVersion: number; type: string; data: Record<string, unknown>; payloads?: Array<{ path: string; digest: string; size: number; state: string }> }>;
  nextCursor: string | null;
}

describe(PayloadsController.name, () => {
  let sut: GatewayTestApp;
  let ws: string;
  let viewer: string;
  let outsider: { ws: string; key: string };
  let payloads: PayloadStore;
  let store: PostgresEventStore;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const path = (digest: string, workspace = ws) => `/api/v1/workspaces/${workspace}/payloads/${digest}`;

  beforeAll(async () => {
    sut = await startGatewayTestApp({ modules: [LiveRoutesModule.forRoot(), { module: AuditRoutesModule }] });
    const setup = await completeSetup(sut);
    ws = setup.workspaceId;
    viewer = (await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { headers: bearer(setup.apiKey), body: { name: 'viewer', role: 'viewer' } })).body.secret;
    const session = await signIn(sut, setup.email, setup.password);
    const other = await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session.headers() });
    const key = await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other.body.id}/api-keys`, { body: { name: 'other', role: 'owner' }, headers: session.headers() });
    outsider = { ws: other.body.id, key: key.body.secret };
    payloads = sut.app.get(PayloadStore);
    store = new PostgresEventStore(sut.db.pool, { registry: registerRunExecutionEvents(new EventRegistry()), doorbellChannel: null });
  }, 60_000);
  afterAll(() => sut?.close());

  it("answers a payload's exact content to any role of its workspace, with its digest in the headers", async () => {
    const value = { body: 'r'.repeat(100_000), status: 200 };
    const ref = await payloads.putJson(ws, value);

    const answer = await sut.request('GET', path(ref.$payload.digest), { headers: bearer(viewer) });

    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.text).toBe(canonicalJson(value));
    expect(sha256Hex(Buffer.from(answer.text, 'utf8'))).toBe(ref.$payload.digest);
    expect(answer.headers.get('etag')).toBe(`"${ref.$payload.digest}"`);
    expect(answer.headers.get('repr-digest')).toBe(`sha-256=:${Buffer.from(ref.$payload.digest, 'hex').toString('base64')}:`);
  });

  it("answers 404 for another workspace's payload, asked in either workspace, and 401 without credentials", async () => {
    const ref = await payloads.putJson(ws, { secret: 'only for this workspace' });

    const foreignPath = await sut.request('GET', path(ref.$payload.digest), { headers: bearer(outsider.key) });
    const ownPath = await sut.request('GET', path(ref.$payload.digest, outsider.ws), { headers: bearer(outsider.key) });
    const anonymous = await sut.request('GET', path(ref.$payload.digest));

    expect(foreignPath.status).toBe(404);
    expect(ownPath.status).toBe(404);
    expect(ownPath.body).toMatchObject({ code: 'payload_not_found' });
    expect(ownPath.text).not.toContain('only for this workspace');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
  });

  it('answers 400 problem+json for a digest that is not 64 lower-case hex digits', async () => {
    for (const bad of ['abc', 'A'.repeat(64), `${'a'.repeat(63)}g`]) {
      const answer = await sut.request('GET', path(bad), { headers: bearer(viewer) });

      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(answer.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'digest' }] });
    }
  });

  it('refuses content altered in storage with 500 naming the digest, and sends none of it', async () => {
    const ref = await payloads.putJson(ws, { log: 'l'.repeat(80_000) });
    const client = await sut.db.pool.connect();
    try {
      await client.query(`SET session_replication_role = replica`);
      await client.query(`UPDATE eventstore.payloads SET content = overlay(content placing 'X'::bytea from 20 for 1) WHERE digest = $1`, [ref.$payload.digest]);
      await client.query(`SET session_replication_role = origin`);
    } finally {
      client.release();
    }

    const answer = await sut.request<{ code: string; detail: string }>('GET', path(ref.$payload.digest), { headers: bearer(viewer) });

    expect(answer.status).toBe(500);
    expect(answer.body.code).toBe('payload_digest_mismatch');
    expect(answer.body.detail).toContain(ref.$payload.digest);
    expect(answer.text).not.toContain('llllllllll');
  });

  describe('run events with references', () => {
    let small: PayloadRef;
    let smallValue: JsonValue;
    const events = (query: string) => sut.request<EventsPage>('GET', `/api/v1/workspaces/${ws}/runs/${RUN}/events${query}`, { headers: bearer(viewer) });

    beforeAll(async () => {
      smallValue = { rows: Array.from({ length: 5_000 }, (_, i) => ({ i, text: `row ${i}` })) };
      small = await payloads.putJson(ws, smallValue);
      const half = Math.ceil(PAGE_INLINE_BYTES / 2) + 1_000;
      const first = await payloads.putJson(ws, 'a'.repeat(half));
      const second = await payloads.putJson(ws, 'b'.repeat(half));
      const tooLarge = await payloads.putJson(ws, 'c'.repeat(PAGE_INLINE_BYTES + 10));
      await store.append(
        `run-${RUN}`,
        'no_stream',
        [
          { type: 'run.tool_result', data: toolResult(small, 'c1'), actor },
          { type: 'run.tool_result', data: toolResult({ inline: true }, 'c2'), actor },
          { type: 'run.tool_result', data: toolResult(first, 'c3'), actor },
          { type: 'run.tool_result', data: toolResult(second, 'c4'), actor },
          { type: 'run.tool_result', data: toolResult(tooLarge, 'c5'), actor },
        ],
        { workspaceId: ws },
      );
    }, 60_000);

    it('replaces each reference by its verified content and says so per event', async () => {
      const answer = await events('?limit=2');

      expect(answer.status).toBe(200);
      expect(answer.body.items.map((item) => item.data['output'])).toEqual([smallValue, { inline: true }]);
      expect(answer.body.items[0]!.payloads).toEqual([{ path: 'output', digest: small.$payload.digest, size: small.$payload.size, mediaType: 'application/json', state: 'inline' }]);
      expect(answer.body.items[1]!.payloads).toBeUndefined();
    });

    it('leaves references as stored when asked, for a client that fetches them itself', async () => {
      const answer = await events('?limit=1&payloads=ref');

      expect(answer.body.items[0]!.data['output']).toEqual(small);
      expect(answer.body.items[0]!.payloads).toEqual([expect.objectContaining({ path: 'output', state: 'reference' })]);
    });

    it('ends a page early when the next payload would not fit, and leaves a payload larger than a page as a reference', async () => {
      const seen: EventsPage['items'] = [];
      const pages: number[] = [];
      let cursor: string | null = '';
      while (cursor !== null) {
        const answer: { body: EventsPage } = await events(`?limit=100${cursor ? `&after=${cursor}` : ''}`);
        pages.push(answer.body.items.length);
        seen.push(...answer.body.items);
        cursor = answer.body.nextCursor;
      }

      expect(pages).toEqual([3, 2]);
      expect(seen.map((item) => item.streamVersion)).toEqual([1, 2, 3, 4, 5]);
      expect(seen.map((item) => item.payloads?.[0]?.state ?? null)).toEqual(['inline', null, 'inline', 'inline', 'too_large']);
      expect(typeof seen[3]!.data['output']).toBe('string');
      expect(seen[4]!.data['output']).toMatchObject({ $payload: { size: PAGE_INLINE_BYTES + 12 } });
    });

    it('shows a reference whose content is missing as missing instead of failing the page', async () => {
      await store.append(`run-${RUN}`, 5, [{ type: 'run.tool_result', data: toolResult({ $payload: { digest: sha256Hex('gone'), size: 6, mediaType: 'application/json' } }, 'c6'), actor }], { workspaceId: ws });

      const answer = await events('?after=' + Buffer.from('e1:5').toString('base64url'));

      expect(answer.status).toBe(200);
      expect(answer.body.items[0]!.payloads).toEqual([expect.objectContaining({ state: 'missing', digest: sha256Hex('gone') })]);
    });

    it('refuses an unknown payloads mode with 400', async () => {
      expect((await events('?payloads=all')).status).toBe(400);
    });
  });

  describe('audit and evidence with references', () => {
    const tamper = async (digest: string) => {
      const client = await sut.db.pool.connect();
      try {
        await client.query(`SET session_replication_role = replica`);
        await client.query(`UPDATE eventstore.payloads SET content = overlay(content placing 'Z'::bytea from 5 for 1) WHERE workspace_id = $1 AND digest = $2`, [ws, digest]);
        await client.query(`SET session_replication_role = origin`);
      } finally {
        client.release();
      }
    };
    const appendRun = async (runId: string, output: PayloadRef) =>
      store.append(`run-${runId}`, 'no_stream', [{ type: 'run.tool_result', data: toolResult(output), actor }], { workspaceId: ws });
    const evidence = async (runId: string) => {
      const answer = await sut.request<EvidenceBundle>('GET', `/api/v1/workspaces/${ws}/runs/${runId}/evidence`, { headers: bearer(viewer) });
      expect(answer.status).toBe(200);
      return answer.body;
    };

    it('exports a bundle holding the content of the payloads its events reference, which verifies offline and catches an altered one', async () => {
      const value = { report: 'e'.repeat(90_000) };
      const ref = await payloads.putJson(ws, value);
      await appendRun('0193b000-0000-7000-8000-0000000000e1', ref);

      const bundle = await evidence('0193b000-0000-7000-8000-0000000000e1');

      expect(bundle.payloads).toEqual([{ digest: ref.$payload.digest, size: ref.$payload.size, mediaType: 'application/json', value }]);
      expect(verifyEvidenceBundle(bundle)).toMatchObject({ ok: true, payloadsChecked: 1, breaks: [] });
      const altered = JSON.parse(JSON.stringify(bundle)) as EvidenceBundle;
      (altered.payloads![0]!.value as { report: string }).report = 'edited';
      expect(verifyEvidenceBundle(altered).breaks).toContainEqual(expect.objectContaining({ reason: 'payload_mismatch', detail: expect.stringContaining(ref.$payload.digest) }));
    });

    it('reports a stored payload altered after the fact in audit verify with its digest, and leaves it out of the bundle', async () => {
      const ref = await payloads.putJson(ws, { report: 'v'.repeat(90_000) });
      await appendRun('0193b000-0000-7000-8000-0000000000e2', ref);
      await tamper(ref.$payload.digest);

      const report = await sut.request<AuditReport>('GET', `/api/v1/workspaces/${ws}/audit/verify`, { headers: bearer(viewer) });
      const bundle = await evidence('0193b000-0000-7000-8000-0000000000e2');

      expect(report.status).toBe(200);
      expect(report.body.ok).toBe(false);
      expect(report.body.payloadsChecked).toBeGreaterThan(0);
      expect(report.body.breaks).toContainEqual(
        expect.objectContaining({ stream: 'run-0193b000-0000-7000-8000-0000000000e2', streamVersion: 1, reason: 'payload_mismatch', payloadDigest: ref.$payload.digest }),
      );
      expect(report.body.breaks.filter((entry) => entry.reason.startsWith('digest') || entry.reason.startsWith('prev') || entry.reason === 'version_gap')).toEqual([]);
      expect(bundle.payloads ?? []).toEqual([]);
      expect(verifyEvidenceBundle(bundle).breaks).toEqual([expect.objectContaining({ reason: 'payload_missing', detail: expect.stringContaining(ref.$payload.digest) })]);
    });
  });

  it('publishes the payload route in the OpenAPI document with its permission and digest parameter', async () => {
    const document = await sut.request<{ paths: Record<string, { get?: { 'x-required-permission'?: string; parameters?: Array<{ name: string; schema?: { pattern?: string } }>; responses: Record<string, unknown> } }> }>(
      'GET',
      '/api/v1/openapi.json',
    );

    const operation = document.body.paths['/api/v1/workspaces/{ws}/payloads/{digest}']?.get;
    expect(operation?.['x-required-permission']).toBe('inspect');
    expect(operation?.responses['200']).toMatchObject({ description: expect.stringContaining('SHA-256 is the digest'), content: { 'application/json': expect.any(Object) } });
    expect(operation?.parameters?.find((parameter) => parameter.name === 'digest')?.schema?.pattern).toBe('^[0-9a-f]{64}$');
  });
});
