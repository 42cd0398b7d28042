import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Document, Spectral, type ISpectralDiagnostic } from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { bearer, startTestApp, type TestApp } from './testing/app.testkit';

const SEVERITY = ['error', 'warning', 'information', 'hint'];
const EXAMPLE = readFileSync(join(__dirname, '../../../examples/release-audit.worker.yaml'), 'utf8');

function finding(diagnostic: ISpectralDiagnostic): string {
  return `${SEVERITY[diagnostic.severity]} ${diagnostic.code} at ${diagnostic.path.join('.')}: ${diagnostic.message}`;
}

interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
}
interface Response {
  content?: Record<string, { schema?: Schema }>;
}
interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { schemas: Record<string, Schema> };
}

const isJson = (mediaType: string) => /^application\/(?:[\w.-]+\+)?json$/.test(mediaType);

/** What is wrong with one success answer's documentation: a 204 has no body; any other names each media type it is sent as, with a schema. */
function successProblems(where: string, status: string, response: Response): string[] {
  const content = Object.entries(response.content ?? {});
  if (status === '204') return content.length ? [`${where}: a 204 declares a body`] : [];
  if (content.length === 0) return [`${where}: no content schema`];
  return content.flatMap(([mediaType, { schema }]) => {
    if (!schema) return [`${where} ${mediaType}: no schema`];
    // A stream, a page or bytes is text or binary under its own media type, never JSON without a shape.
    if (!isJson(mediaType) && schema.type !== 'string') return [`${where} ${mediaType}: not described as text or binary`];
    return [];
  });
}

describe('the OpenAPI document', () => {
  let sut: TestApp;

  beforeAll(async () => {
    sut = await startTestApp({ PACKETAGENT_PUBLIC_URL: 'https://packetagent.example.com' });
  });
  afterAll(() => sut?.close());

  it('passes the spectral:oas ruleset with no error and no warning', async () => {
    const answer = await sut.request('GET', '/api/v1/openapi.json');
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas as never, 'recommended']] });

    const diagnostics = await spectral.run(new Document(answer.text, Json, 'openapi.json'));

    expect(diagnostics.filter((diagnostic) => diagnostic.severity <= 1).map(finding)).toEqual([]);
    const document = answer.body as { tags: { name: string; description: string }[]; servers: { url: string }[]; paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    expect(Object.keys(document.paths['/api/v1/workspaces/{ws}/deployments']!['post']!.responses)).toEqual(expect.arrayContaining(['200', '201']));
    expect(Object.keys(document.paths['/api/v1/packetade/deployments/{id}/runs']!['post']!.responses)).toEqual(expect.arrayContaining(['200', '201']));
    expect(document.tags.filter((tag) => !tag.description || tag.description === tag.name)).toEqual([]);
    expect(document.servers).toEqual([{ url: 'https://packetagent.example.com', description: 'this installation' }]);
  });

  it('describes every success answer of every operation, under the media type it is sent as', async () => {
    const document = (await sut.request<OpenApi>('GET', '/api/v1/openapi.json')).body;
    const answers = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.entries(operation.responses)
          .filter(([status]) => /^2\d\d$/.test(status))
          .map(([status, response]) => ({ where: `${method.toUpperCase()} ${path} ${status}`, status, response })),
      ),
    );

    expect(answers.length).toBeGreaterThan(100);
    expect(answers.flatMap(({ where, status, response }) => successProblems(where, status, response))).toEqual([]);
    expect(document.paths['/metrics']!['get']!.responses['200']!.content).toEqual({ 'text/plain': { schema: { type: 'string' } } });
    expect(Object.keys(document.paths['/api/v1/workspaces/{ws}/runs/{runId}/events/stream']!['get']!.responses['200']!.content!)).toEqual(['text/event-stream']);
  });

  it('documents the readiness POST deployments answers beside intake\'s reply, and answers it', async () => {
    const document = (await sut.request<OpenApi>('GET', '/api/v1/openapi.json')).body;
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: sut.setupToken, email: 'owner@example.com', password: 'correct horse battery staple', workspace: 'Ops' },
    });
    const api = (path: string) => `/api/v1/workspaces/${setup.body.workspaceId}${path}`;
    const owner = bearer(setup.body.apiKey);
    const worker = await sut.request<{ id: string }>('POST', api('/workers'), { body: { name: 'release-audit' }, headers: owner });
    const version = await sut.request('POST', api(`/workers/${worker.body.id}/versions`), { raw: EXAMPLE, headers: { ...owner, 'content-type': 'application/yaml' } });
    expect(version.status).toBe(201);

    // The example names a credential this server lacks: deployed knowingly, so readiness lists it.
    const deployed = await sut.request<Record<string, unknown>>('POST', api('/deployments'), { body: { workerId: worker.body.id, acceptMissing: true }, headers: owner });

    expect(deployed.status).toBe(201);
    expect(deployed.body['readiness']).toEqual({ ready: false, missing: expect.arrayContaining([expect.objectContaining({ kind: 'credential', name: 'slack_release_channel' })]) });
    const reference = document.paths['/api/v1/workspaces/{ws}/deployments']!['post']!.responses['201']!.content!['application/json']!.schema!.$ref!;
    const schema = document.components.schemas[reference.split('/').pop()!]!;
    expect(Object.keys(deployed.body).sort()).toEqual(Object.keys(schema.properties!).sort());
    expect(schema.required).toEqual(expect.arrayContaining(['readiness', 'webhooks', 'created']));
  });
});
