import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@packetagent/testing';
import { runCli } from './cli';
import { ExitCode } from './errors';

// Answers recorded from the API's documented shapes: these tests cover the CLI's own request
// building, output and exit codes, not the server.

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Reply {
  status: number;
  body?: unknown;
  contentType?: string;
}

type Routes = Record<string, (request: Recorded) => Reply>;

class FakeApi {
  readonly requests: Recorded[] = [];
  private routes: Routes = {};
  private server: Server | null = null;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  answer(routes: Routes): void {
    this.routes = routes;
    this.requests.length = 0;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        this.requests.push(request);
        const route = this.routes[`${request.method} ${request.url}`];
        const reply: Reply = route
          ? route(request)
          : { status: 404, contentType: 'application/problem+json', body: { type: 'about:blank', title: 'Not Found', status: 404, detail: `no route ${request.url}` } };
        res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json' });
        res.end(reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((ready) => this.server!.listen(0, '127.0.0.1', ready));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((done) => this.server?.close(done));
  }
}

const WS = '/api/v1/workspaces/ws_demo';
const DIGEST = 'a'.repeat(64);
// Worker, deployment, run and attention ids are UUIDv7, as the server makes them.
const WORKER_ID = '0193a6f2-7c1e-7d4a-9b1e-2f6c8d0e4a11';

const YAML_DEFINITION = `apiVersion: packetagent/v1
kind: Worker
name: release-audit
description: Verifies release evidence.
instructions: Check every release item.
exit: { finish: { criteria: ["every release item has evidence"] } }
`;

describe(runCli.name, () => {
  const api = new FakeApi();
  let dir: string;

  beforeAll(async () => {
    await api.start();
    dir = mkdtempSync(join(tmpdir(), 'pa-cli-'));
  });

  afterAll(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function sut(argv: string[], env: NodeJS.ProcessEnv = {}, stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      env: { PACKETAGENT_API_URL: api.url, PACKETAGENT_API_KEY: 'pa_key1_secret', PACKETAGENT_WORKSPACE: 'ws_demo', ...env },
      cwd: dir,
      readStdin: () => Promise.resolve(stdin),
    });
    return { code, stdout, stderr };
  }

  function file(name: string, content: string): string {
    writeFileSync(join(dir, name), content);
    return name;
  }

  describe('worker apply', () => {
    it('creates the worker and its version in one request, posting the YAML file verbatim as application/yaml', async () => {
      api.answer({
        [`POST ${WS}/workers/apply`]: () => ({ status: 201, body: { workerId: WORKER_ID, workerCreated: true, version: 1, digest: DIGEST, created: true } }),
      });

      const result = await sut(['worker', 'apply', '-f', file('release-audit.worker.yaml', YAML_DEFINITION)]);

      expect(result).toEqual({ code: 0, stdout: `worker release-audit (${WORKER_ID}) version 1 digest sha256:${DIGEST}\n`, stderr: '' });
      expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`POST ${WS}/workers/apply`]);
      const [apply] = api.requests;
      expect(apply!.headers.authorization).toBe('Bearer pa_key1_secret');
      expect(apply!.headers['content-type']).toBe('application/yaml');
      expect(apply!.body).toBe(YAML_DEFINITION);
    });

    it('says unchanged when the API created no version and posts a JSON file as application/json', async () => {
      const definition = JSON.stringify({ apiVersion: 'packetagent/v1', kind: 'Worker', name: 'release-audit', instructions: 'x' });
      api.answer({
        [`POST ${WS}/workers/apply`]: () => ({ status: 200, body: { workerId: WORKER_ID, workerCreated: false, version: 4, digest: `sha256:${DIGEST}`, created: false } }),
      });

      const result = await sut(['worker', 'apply', '-f', file('definition.json', definition)]);

      expect(result.stdout).toBe(`worker release-audit (${WORKER_ID}) version 4 digest sha256:${DIGEST} unchanged\n`);
      expect(result.code).toBe(ExitCode.ok);
      expect(api.requests[0]!.headers['content-type']).toBe('application/json');
      expect(api.requests[0]!.body).toBe(definition);
    });

    it('tells JSON from YAML by content when the file has neither extension, and reads standard input for -', async () => {
      api.answer({
        [`POST ${WS}/workers/apply`]: () => ({ status: 201, body: { workerId: WORKER_ID, workerCreated: false, version: 5, digest: DIGEST, created: true } }),
      });

      const fromFile = await sut(['worker', 'apply', '-f', file('definition', ' {"name": "release-audit"}')]);
      const fromStdin = await sut(['worker', 'apply', '-f', '-'], {}, YAML_DEFINITION);

      expect([fromFile.code, fromStdin.code]).toEqual([0, 0]);
      expect(api.requests.map((r) => r.headers['content-type'])).toEqual(['application/json', 'application/yaml']);
    });

    it('prints each issue of a refused definition once, under a message that does not repeat them', async () => {
      const issues = [
        { path: 'tools[0].resources[0]', message: 'not a URL origin or glob' },
        { path: 'exit', message: 'required' },
      ];
      api.answer({
        [`POST ${WS}/workers/apply`]: () => ({
          status: 400,
          contentType: 'application/problem+json',
          body: {
            type: 'urn:packetagent:problem:validation_failed',
            title: 'Bad Request',
            status: 400,
            code: 'validation_failed',
            detail: 'invalid definition: tools[0].resources[0]: not a URL origin or glob; exit: required',
            errors: issues,
          },
        }),
      });

      const result = await sut(['worker', 'apply', '-f', file('refused.yaml', YAML_DEFINITION)]);

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: ['error: Bad Request: invalid definition', '  tools[0].resources[0]: not a URL origin or glob', '  exit: required', ''].join('\n'),
      });
    });

    it("ends a YAML issue the server reports at its own sentence, without the parser's excerpt", async () => {
      api.answer({
        [`POST ${WS}/workers/apply`]: () => ({
          status: 400,
          contentType: 'application/problem+json',
          body: {
            title: 'Bad Request',
            status: 400,
            code: 'validation_failed',
            detail: 'invalid definition: (yaml) 2:1: Missing closing "quote at line 2, column 1:\n\nkey: "x\n^\n',
            errors: [{ path: '(yaml) 2:1', message: 'Missing closing "quote at line 2, column 1:\n\nkey: "x\n^\n' }],
          },
        }),
      });

      const result = await sut(['worker', 'apply', '-f', file('quoted.yaml', YAML_DEFINITION)]);

      expect(result.stderr).toBe(['error: Bad Request: invalid definition', '  (yaml) 2:1: Missing closing "quote', ''].join('\n'));
    });

    it('prints a JSON summary with --json', async () => {
      api.answer({
        [`POST ${WS}/workers/apply`]: () => ({ status: 201, body: { workerId: WORKER_ID, workerCreated: true, version: 1, digest: DIGEST, created: true } }),
      });

      const result = await sut(['worker', 'apply', '--json', '-f', file('w.yaml', YAML_DEFINITION)]);

      expect(JSON.parse(result.stdout)).toEqual({
        workerId: WORKER_ID,
        name: 'release-audit',
        workerCreated: true,
        version: 1,
        digest: `sha256:${DIGEST}`,
        unchanged: false,
      });
    });

    it('refuses a definition without a name, and a file that is not YAML, before calling the API', async () => {
      api.answer({});

      const unnamed = await sut(['worker', 'apply', '-f', file('unnamed.yaml', 'kind: Worker\n')]);
      const broken = await sut(['worker', 'apply', '-f', file('broken.yaml', 'name: [unclosed\n')]);
      const missing = await sut(['worker', 'apply', '-f', 'absent.yaml']);

      expect(unnamed).toEqual({ code: 1, stdout: '', stderr: 'error: unnamed.yaml: the definition has no "name"\n' });
      expect(broken).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: broken.yaml:2:1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]\n',
      });
      expect(missing).toEqual({ code: 1, stdout: '', stderr: 'error: cannot read absent.yaml: no such file\n' });
      expect(api.requests).toEqual([]);
    });
  });

  describe('deploy', () => {
    it('deploys the named worker at a version with overrides and prints the webhook URL and its secret', async () => {
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [{ id: 'wrk_1', name: 'release-audit' }], nextCursor: null } }),
        [`POST ${WS}/deployments`]: () => ({
          status: 201,
          body: {
            id: 'dep_1',
            version: 2,
            triggers: [
              { triggerId: 'trg_cron', kind: 'cron' },
              { triggerId: 'trg_hook', kind: 'webhook', url: '/hooks/trg_hook', secret: 'whsec_once' },
            ],
          },
        }),
      });

      const result = await sut(['deploy', 'release-audit', '--version', '2', '--overrides', file('overrides.yaml', 'budgets:\n  perRunUsd: 0.25\n')]);

      expect(result).toEqual({
        code: 0,
        stdout: [
          'deployment dep_1 (worker release-audit version 2)',
          `webhook trg_hook: ${api.url}/hooks/trg_hook`,
          '  secret: whsec_once  (shown once: store it now)',
          '',
        ].join('\n'),
        stderr: '',
      });
      expect(JSON.parse(api.requests[1]!.body)).toEqual({ workerId: 'wrk_1', version: 2, overrides: { budgets: { perRunUsd: 0.25 } } });
    });

    it('leaves the version to the server when none is given, accepts a worker id, and takes secrets listed beside the triggers', async () => {
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [{ id: 'wrk_1', name: 'release-audit' }], nextCursor: null } }),
        [`POST ${WS}/deployments`]: () => ({
          status: 201,
          body: { id: 'dep_2', triggers: [{ triggerId: 'trg_hook', kind: 'webhook' }], webhooks: [{ triggerId: 'trg_hook', secret: 'whsec_2' }] },
        }),
      });

      const result = await sut(['deploy', 'wrk_1']);

      expect(result.stdout).toBe(
        ['deployment dep_2 (worker release-audit)', `webhook trg_hook: ${api.url}/hooks/trg_hook`, '  secret: whsec_2  (shown once: store it now)', ''].join('\n'),
      );
      expect(JSON.parse(api.requests[1]!.body)).toEqual({ workerId: 'wrk_1' });
    });

    it('prints what a refused deployment lacks, one line each, and how to deploy anyway', async () => {
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [{ id: 'wrk_1', name: 'release-audit' }], nextCursor: null } }),
        [`POST ${WS}/deployments`]: () => ({
          status: 422,
          contentType: 'application/problem+json',
          body: {
            title: 'Unprocessable Entity',
            status: 422,
            code: 'deployment_not_ready',
            detail: 'worker release-audit cannot run here yet: 2 requirements missing (deploy with acceptMissing: true to deploy it anyway)',
            errors: [
              { path: 'credentials.slack_release_channel', message: 'not stored in the workspace vault' },
              { path: 'providers.preset:default', message: 'no API key is configured for anthropic' },
            ],
          },
        }),
      });

      const result = await sut(['deploy', 'release-audit']);

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: [
          'error: worker release-audit cannot run here yet, 2 missing (deploy with --accept-missing to deploy it anyway; its runs fail until these exist)',
          '  credential slack_release_channel: not stored in the workspace vault',
          '  provider preset:default: no API key is configured for anthropic',
          '',
        ].join('\n'),
      });
      expect(JSON.parse(api.requests[1]!.body)).toEqual({ workerId: 'wrk_1' });
    });

    it('deploys with --accept-missing and says what the deployment still lacks', async () => {
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [{ id: 'wrk_1', name: 'release-audit' }], nextCursor: null } }),
        [`POST ${WS}/deployments`]: () => ({
          status: 201,
          body: {
            id: 'dep_3',
            version: 1,
            triggers: [],
            webhooks: [],
            readiness: { ready: false, missing: [{ kind: 'credential', name: 'slack_release_channel', reason: 'not stored in the workspace vault' }] },
          },
        }),
      });

      const result = await sut(['deploy', 'release-audit', '--accept-missing']);

      expect(result.stdout).toBe(
        [
          'deployment dep_3 (worker release-audit version 1)',
          'not ready: 1 missing; its runs fail until these exist:',
          '  credential slack_release_channel: not stored in the workspace vault',
          '',
        ].join('\n'),
      );
      expect(JSON.parse(api.requests[1]!.body)).toEqual({ workerId: 'wrk_1', acceptMissing: true });
    });

    it('exits 1 naming the worker when the workspace has none by that name or id', async () => {
      api.answer({ [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [], nextCursor: null } }) });

      const result = await sut(['deploy', 'nobody']);

      expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: no worker named or identified "nobody" in this workspace\n' });
    });

    it('refuses a version that is not a positive integer', async () => {
      api.answer({});

      const result = await sut(['deploy', 'release-audit', '--version', 'latest']);

      expect(result.code).toBe(1);
      expect(result.stderr).toContain("error: option '--version <n>' argument 'latest' is invalid.");
      expect(api.requests).toEqual([]);
    });
  });

  describe('run', () => {
    it('starts a run with input from a file and an idempotency key and prints the run id', async () => {
      api.answer({ [`POST ${WS}/deployments/dep_1/runs`]: () => ({ status: 201, body: { runId: 'run_9', duplicate: false } }) });

      const result = await sut(['run', 'start', 'dep_1', '--input', `@${file('input.yaml', 'release: v1.4.0\n')}`, '--idempotency-key', 'rel-v1.4.0']);

      expect(result).toEqual({ code: 0, stdout: 'run_9\n', stderr: '' });
      expect(JSON.parse(api.requests[0]!.body)).toEqual({ input: { release: 'v1.4.0' }, idempotencyKey: 'rel-v1.4.0' });
    });

    it('sends inline JSON input and refuses input that is not JSON before calling the API', async () => {
      api.answer({ [`POST ${WS}/deployments/dep%2F1/runs`]: () => ({ status: 201, body: { runId: 'run_10' } }) });

      const good = await sut(['run', 'start', 'dep/1', '--input', '{"release":"v2"}']);
      const bad = await sut(['run', 'start', 'dep/1', '--input', '{release']);

      expect(good.stdout).toBe('run_10\n');
      expect(api.requests.map((r) => r.body)).toEqual(['{"input":{"release":"v2"}}']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^error: --input: not valid JSON: /);
    });

    it("prints the run's state first and then its other fields", async () => {
      api.answer({
        [`GET ${WS}/runs/run_9`]: () => ({
          status: 200,
          body: { id: 'run_9', deploymentId: 'dep_1', version: 2, state: 'waiting', hold: null, source: 'manual', details: { a: 1 } },
        }),
      });

      const result = await sut(['run', 'get', 'run_9']);

      expect(result.stdout).toBe(['run run_9', 'state: waiting', 'deploymentId: dep_1', 'version: 2', 'hold: -', 'source: manual', 'details: {"a":1}', ''].join('\n'));
      const json = await sut(['--json', 'run', 'get', 'run_9']);
      expect(JSON.parse(json.stdout)).toMatchObject({ id: 'run_9', state: 'waiting', details: { a: 1 } });
    });
    describe('a finished run', () => {
      const RUN = '0193a6f2-8d2f-7e5b-8c2f-3a7d9e1f5b22';
      const ATTENTION = '0193a6f2-9e3a-7f6c-9d3a-4b8e0f2a6c33';
      const runBody = (state: string) => ({ id: RUN, deploymentId: 'dep_1', version: 2, state, hold: null, source: 'manual' });
      const event = (streamVersion: number, type: string, data: Record<string, unknown>, actor = { kind: 'service', id: 'supervisor' }) => ({
        id: `e${streamVersion}`,
        position: 200 + streamVersion,
        streamVersion,
        type,
        occurredAt: `2026-11-30T00:00:0${streamVersion}.000Z`,
        actor,
        data,
      });
      const events = (...items: unknown[]) => ({ [`GET ${WS}/runs/${RUN}/events?limit=500&payloads=ref`]: () => ({ status: 200, body: { items, nextCursor: null } }) });

      it('shows the reason of a failed run right after its state', async () => {
        api.answer({
          [`GET ${WS}/runs/${RUN}`]: () => ({ status: 200, body: runBody('failed') }),
          ...events(event(1, 'run.admitted', {}), event(2, 'run.failed', { reason: 'iteration_limit', detail: 'ran 20 of 20 iterations without finishing' })),
        });

        const result = await sut(['run', 'get', RUN]);
        const json = await sut(['--json', 'run', 'get', RUN]);

        expect(result.stdout.split('\n').slice(0, 3)).toEqual([`run ${RUN}`, 'state: failed', 'reason: iteration_limit: ran 20 of 20 iterations without finishing']);
        expect(JSON.parse(json.stdout)).toMatchObject({ state: 'failed', outcome: { event: 'run.failed', reason: 'iteration_limit: ran 20 of 20 iterations without finishing', by: null } });
      });

      it('names who rejected the call and why, in run get and in run logs', async () => {
        api.answer({
          [`GET ${WS}/runs/${RUN}`]: () => ({ status: 200, body: runBody('rejected') }),
          [`GET ${WS}/attention/${ATTENTION}`]: () => ({
            status: 200,
            body: { id: ATTENTION, state: 'rejected', reason: 'not before the release review', answeredBy: { kind: 'user', id: 'usr_ana' } },
          }),
          ...events(
            event(1, 'run.waiting', { reason: 'approval', attentionId: ATTENTION }),
            event(2, 'run.rejected', { attentionId: ATTENTION, reason: 'the approval request for this call was rejected' }),
          ),
        });

        const got = await sut(['run', 'get', RUN]);
        const logs = await sut(['run', 'logs', RUN]);

        const said = `attention ${ATTENTION} rejected: not before the release review (by user usr_ana)`;
        expect(got.stdout.split('\n')[2]).toBe(`reason: ${said}`);
        expect(logs.stdout.split('\n')[1]).toBe(`2026-11-30T00:00:02.000Z     2  run.rejected  ${said}`);
      });

      it('exits 1 with the conflict for both stop and pause', async () => {
        const conflict = (verb: string) => () => ({
          status: 409,
          contentType: 'application/problem+json',
          body: { title: 'Conflict', status: 409, code: 'invalid_transition', detail: `run ${RUN} is succeeded; it cannot be ${verb}` },
        });
        api.answer({ [`POST ${WS}/runs/${RUN}/stop`]: conflict('stopped'), [`POST ${WS}/runs/${RUN}/pause`]: conflict('paused') });

        const stop = await sut(['run', 'stop', RUN]);
        const pause = await sut(['run', 'pause', RUN]);

        expect(stop).toEqual({ code: 1, stdout: '', stderr: `error: Conflict: run ${RUN} is succeeded; it cannot be stopped\n` });
        expect(pause).toEqual({ code: 1, stdout: '', stderr: `error: Conflict: run ${RUN} is succeeded; it cannot be paused\n` });
      });
    });
  });

  describe('run logs', () => {
    it("prints every page of a run's events in order, one line each, with what each says", async () => {
      const event = (streamVersion: number, type: string, data: Record<string, unknown>) => ({ id: `e${streamVersion}`, position: 100 + streamVersion, streamVersion, type, occurredAt: `2026-11-30T00:00:0${streamVersion}.000Z`, actor: { kind: 'service', id: 'supervisor' }, data });
      api.answer({
        [`GET ${WS}/runs/run_9/events?limit=500&payloads=ref`]: () => ({
          status: 200,
          body: {
            items: [
              event(1, 'run.model_turn', { model: { provider: 'scripted', model: 'demo', scripted: true }, costUsd: 0.0012, toolCalls: [{ name: 'http_fetch' }] }),
              event(2, 'run.tool_decided', { tool: 'http_fetch', verb: 'GET', resource: 'https://example.com/', decision: 'allow', reason: { code: 'granted' } }),
            ],
            nextCursor: 'c2',
          },
        }),
        [`GET ${WS}/runs/run_9/events?after=c2&limit=500&payloads=ref`]: () => ({ status: 200, body: { items: [event(3, 'run.succeeded', { summary: 'done', output: null })], nextCursor: null } }),
      });

      const result = await sut(['run', 'logs', 'run_9']);

      expect(result.stdout).toBe(
        [
          '2026-11-30T00:00:01.000Z     1  run.model_turn  scripted/demo (scripted)  $0.001200  calls: http_fetch',
          '2026-11-30T00:00:02.000Z     2  run.tool_decided  http_fetch GET https://example.com/ -> allow (granted)',
          '2026-11-30T00:00:03.000Z     3  run.succeeded  done',
          '',
        ].join('\n'),
      );
      expect(api.requests).toHaveLength(2);
    });

    it('shows a field stored by reference as its size and digest, without fetching it', async () => {
      const ref = (size: number, digest: string) => ({ $payload: { digest, size, mediaType: 'application/json' } });
      const output = ref(5 * 1024 * 1024 + 17, 'c'.repeat(64));
      api.answer({
        [`GET ${WS}/runs/run_9/events?limit=500&payloads=ref`]: () => ({
          status: 200,
          body: {
            items: [
              { id: 'e1', position: 101, streamVersion: 1, type: 'run.model_turn', occurredAt: '2026-11-30T00:00:01.000Z', data: { model: { provider: 'scripted', model: 'demo', scripted: true }, costUsd: 0, text: ref(600_802, 'a'.repeat(64)), toolCalls: [{ name: 'http_fetch', arguments: ref(70_000, 'b'.repeat(64)) }] } },
              { id: 'e2', position: 102, streamVersion: 2, type: 'run.tool_result', occurredAt: '2026-11-30T00:00:02.000Z', data: { tool: 'http_fetch', ok: true, summary: '200 OK', output }, payloads: [{ path: 'output', digest: 'c'.repeat(64), size: output.$payload.size, mediaType: 'application/json', state: 'reference' }] },
            ],
            nextCursor: null,
          },
        }),
      });

      const result = await sut(['run', 'logs', 'run_9']);

      expect(result.stdout).toBe(
        [
          `2026-11-30T00:00:01.000Z     1  run.model_turn  scripted/demo (scripted)  $0.000000  calls: http_fetch  [text: 586.7 KiB sha256:${'a'.repeat(64)}]  [toolCalls[0].arguments: 68.4 KiB sha256:${'b'.repeat(64)}]`,
          `2026-11-30T00:00:02.000Z     2  run.tool_result  http_fetch ok: 200 OK  [output: 5.0 MiB sha256:${'c'.repeat(64)}]`,
          '',
        ].join('\n'),
      );
      expect(api.requests.map((request) => request.url)).toEqual([`${WS}/runs/run_9/events?limit=500&payloads=ref`]);
    });
  });

  describe('payload get', () => {
    const content = JSON.stringify({ body: 'x'.repeat(100), status: 200 });
    const digest = createHash('sha256').update(content).digest('hex');

    it('prints the value of a payload after checking it against its digest, and writes the exact bytes with --out', async () => {
      api.answer({ [`GET ${WS}/payloads/${digest}`]: () => ({ status: 200, body: content }) });

      const printed = await sut(['payload', 'get', digest]);
      const written = await sut(['payload', 'get', digest, '--out', 'payload.json']);

      expect(printed).toEqual({ code: 0, stdout: `${JSON.stringify(JSON.parse(content), null, 2)}\n`, stderr: '' });
      expect(written.stdout).toBe(`wrote ${content.length} B to payload.json (sha256:${digest} verified)\n`);
      expect(readFileSync(join(dir, 'payload.json'), 'utf8')).toBe(content);
    });

    it('prints a text payload as the text itself', async () => {
      const text = JSON.stringify('line one\nline two');
      const textDigest = createHash('sha256').update(text).digest('hex');
      api.answer({ [`GET ${WS}/payloads/${textDigest}`]: () => ({ status: 200, body: text }) });

      expect((await sut(['payload', 'get', textDigest])).stdout).toBe('line one\nline two\n');
    });

    it('exits 1 when the content answered does not match the digest asked for, and refuses a malformed digest before calling', async () => {
      api.answer({ [`GET ${WS}/payloads/${digest}`]: () => ({ status: 200, body: `${content} ` }) });

      const tampered = await sut(['payload', 'get', digest]);
      const malformed = await sut(['payload', 'get', 'ABC']);

      expect(tampered.code).toBe(ExitCode.failure);
      expect(tampered.stderr).toBe(`error: the content answered for payload ${digest} digests to ${createHash('sha256').update(`${content} `).digest('hex')}\n`);
      expect(tampered.stdout).toBe('');
      expect(malformed).toMatchObject({ code: ExitCode.failure, stderr: 'error: "ABC" is not a payload digest: 64 lower-case hex digits\n' });
      expect(api.requests).toHaveLength(1);
    });

    it("reports the API's 404 for a payload it does not hold", async () => {
      api.answer({});

      const result = await sut(['payload', 'get', 'd'.repeat(64)]);

      expect(result.code).toBe(ExitCode.failure);
      expect(result.stderr).toContain('Not Found');
    });
  });

  describe('run control', () => {
    const RUN = { id: 'run_9', deploymentId: 'dep_1', state: 'running', stopRequested: false, pauseRequested: false, createdAt: '2026-11-30T06:00:00.000Z' };

    it('posts stop and pause with the reason, resume with an empty body, and prints the run line', async () => {
      api.answer({
        [`POST ${WS}/runs/run_9/stop`]: () => ({ status: 200, body: { ...RUN, stopRequested: true } }),
        [`POST ${WS}/runs/run_9/pause`]: () => ({ status: 200, body: { ...RUN, pauseRequested: true } }),
        [`POST ${WS}/runs/run_9/resume`]: () => ({ status: 200, body: RUN }),
      });

      const stop = await sut(['run', 'stop', 'run_9', '--reason', 'wrong release']);
      const pause = await sut(['run', 'pause', 'run_9']);
      const resume = await sut(['run', 'resume', 'run_9']);

      expect(stop).toEqual({ code: 0, stdout: 'run_9  running  dep_1  2026-11-30T06:00:00.000Z  (stop requested)\n', stderr: '' });
      expect(pause.stdout).toBe('run_9  running  dep_1  2026-11-30T06:00:00.000Z  (pause requested)\n');
      expect(resume.stdout).toBe('run_9  running  dep_1  2026-11-30T06:00:00.000Z\n');
      expect(api.requests.map((r) => r.body)).toEqual(['{"reason":"wrong release"}', '{}', '{}']);
    });

    it('exits 1 with the problem when the run is already finished', async () => {
      api.answer({
        [`POST ${WS}/runs/run_9/resume`]: () => ({
          status: 409,
          contentType: 'application/problem+json',
          body: { title: 'Conflict', status: 409, detail: 'run run_9 is succeeded' },
        }),
      });

      const result = await sut(['run', 'resume', 'run_9']);

      expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: Conflict: run run_9 is succeeded\n' });
    });

    it('follows nextCursor with the filters until the limit, asking each page only for what is left', async () => {
      const runs = Array.from({ length: 5 }, (_, i) => ({ ...RUN, id: `run_${i}`, state: 'queued' }));
      api.answer({
        [`GET ${WS}/runs?deploymentId=dep_1&state=queued&limit=4`]: () => ({ status: 200, body: { items: runs.slice(0, 2), nextCursor: 'c2' } }),
        [`GET ${WS}/runs?deploymentId=dep_1&state=queued&cursor=c2&limit=2`]: () => ({ status: 200, body: { items: runs.slice(2, 5), nextCursor: 'c3' } }),
      });

      const result = await sut(['run', 'list', '--deployment', 'dep_1', '--state', 'queued', '--limit', '4']);

      expect(result.code).toBe(0);
      expect(result.stdout.split('\n').filter(Boolean).map((line) => line.split('  ')[0])).toEqual(['run_0', 'run_1', 'run_2', 'run_3']);
      expect(api.requests).toHaveLength(2);
    });

    it('asks for 50 runs by default, stops when the cursor ends, and prints JSON with --json', async () => {
      api.answer({
        [`GET ${WS}/runs?limit=50`]: () => ({ status: 200, body: { items: [RUN], nextCursor: null } }),
        [`GET ${WS}/runs?state=failed&limit=50`]: () => ({ status: 200, body: { items: [], nextCursor: null } }),
      });

      const result = await sut(['--json', 'run', 'list']);
      const empty = await sut(['run', 'list', '--state', 'failed']);

      expect(JSON.parse(result.stdout)).toEqual({ items: [RUN] });
      expect(empty).toEqual({ code: 0, stdout: 'no runs\n', stderr: '' });
      expect(api.requests).toHaveLength(2);
    });

    it('refuses a limit that is not a positive integer', async () => {
      api.answer({});

      const result = await sut(['run', 'list', '--limit', '0']);

      expect(result.code).toBe(1);
      expect(result.stderr).toContain("error: option '--limit <n>' argument '0' is invalid.");
      expect(api.requests).toEqual([]);
    });
  });

  describe('notifications', () => {
    const DEAD = {
      deliveryId: '0190d6a2-0000-7000-8000-000000000001',
      trigger: 'attention',
      route: { index: 0, name: 'ops', channel: 'webhook', credential: 'ops_hook', to: null, role: 'member' },
      state: 'dead',
      runId: 'run_9',
      attempts: 2,
      attemptLog: [
        { at: '2026-11-30T07:00:00.000Z', afterMs: null, outcome: 'failed', status: 503, code: 'http_503', message: 'the receiver answered 503 Service Unavailable' },
        { at: '2026-11-30T07:00:01.000Z', afterMs: 1000, outcome: 'failed', status: 503, code: 'http_503', message: 'the receiver answered 503 Service Unavailable' },
      ],
      nextAttemptAt: null,
      lastError: { code: 'expired', message: 'not delivered by 2026-11-30T07:00:02.000Z after 2 attempts' },
      createdAt: '2026-11-30T07:00:00.000Z',
    };

    it('lists dead deliveries with their reason and says how to page on', async () => {
      api.answer({ [`GET ${WS}/notifications/deliveries?state=dead`]: () => ({ status: 200, body: { items: [DEAD], next: DEAD.deliveryId } }) });

      const result = await sut(['notifications', 'list', '--state', 'dead']);

      expect(result).toEqual({
        code: 0,
        stdout: `${DEAD.deliveryId}  dead  attention  webhook ops  run run_9  2 attempts  expired: not delivered by 2026-11-30T07:00:02.000Z after 2 attempts\nolder: --after ${DEAD.deliveryId}\n`,
        stderr: '',
      });
    });

    it('shows each attempt of a delivery, and redrives it', async () => {
      api.answer({
        [`GET ${WS}/notifications/deliveries/${DEAD.deliveryId}`]: () => ({ status: 200, body: DEAD }),
        [`POST ${WS}/notifications/deliveries/${DEAD.deliveryId}/redrive`]: () => ({ status: 200, body: { ...DEAD, state: 'pending', nextAttemptAt: '2026-11-30T08:00:00.000Z' } }),
      });

      const shown = await sut(['notifications', 'get', DEAD.deliveryId]);
      const redriven = await sut(['notifications', 'redrive', DEAD.deliveryId]);

      expect(shown.stdout.split('\n')[2]).toBe('  2.  2026-11-30T07:00:01.000Z  after 1000 ms  failed http_503: the receiver answered 503 Service Unavailable');
      expect(redriven.stdout).toContain('pending  attention  webhook ops  run run_9  2 attempts  next attempt 2026-11-30T08:00:00.000Z');
    });

    it('reports a refused redrive with the problem and a failing exit code', async () => {
      api.answer({
        [`POST ${WS}/notifications/deliveries/${DEAD.deliveryId}/redrive`]: () => ({
          status: 409,
          body: { type: 'about:blank', title: 'Conflict', status: 409, code: 'delivery_not_dead', detail: 'delivery is delivered: only a dead-lettered delivery can be redriven', requestId: 'r1' },
          headers: { 'content-type': 'application/problem+json' },
        }),
      });

      const result = await sut(['notifications', 'redrive', DEAD.deliveryId]);

      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('only a dead-lettered delivery can be redriven');
    });
  });

  describe('attention', () => {
    const OPEN = {
      id: 'att_1',
      state: 'open',
      runId: 'run_9',
      tool: 'http_fetch',
      verb: 'POST',
      resource: 'https://api.example.com/releases',
      scope: null,
      deadline: '2026-11-30T07:00:00.000Z',
    };

    it('lists records filtered by state, one line each', async () => {
      api.answer({ [`GET ${WS}/attention?state=open`]: () => ({ status: 200, body: { items: [OPEN] } }) });

      const result = await sut(['attention', 'list', '--state', 'open']);

      expect(result).toEqual({
        code: 0,
        stdout: 'att_1  open  run run_9  http_fetch POST https://api.example.com/releases  until 2026-11-30T07:00:00.000Z\n',
        stderr: '',
      });
    });

    it('shows what a budget request asks for and why', async () => {
      const budget = {
        ...OPEN,
        id: 'att_2',
        tool: 'budget',
        verb: 'raise',
        resource: null,
        arguments: { kind: 'budget_request', evidence: { request: 1, requestedUsd: 0.5, spentUsd: 0.5, limitUsd: 0.5, reason: 'the run has spent $0.500000 of its $0.5 limit' } },
      };
      api.answer({ [`GET ${WS}/attention?state=open`]: () => ({ status: 200, body: { items: [budget] } }) });

      const result = await sut(['attention', 'list', '--state', 'open']);

      expect(result.stdout).toBe('att_2  open  run run_9  budget request: $0.5 more (spent $0.5 of $0.5: the run has spent $0.500000 of its $0.5 limit)  until 2026-11-30T07:00:00.000Z\n');
    });

    it('approves once by default and for the run with --for-run', async () => {
      api.answer({
        [`POST ${WS}/attention/att_1/approve`]: (request) => ({
          status: 200,
          body: { ...OPEN, state: 'approved', scope: (JSON.parse(request.body) as { scope: string }).scope },
        }),
      });

      const once = await sut(['approve', 'att_1']);
      const forRun = await sut(['approve', 'att_1', '--for-run']);

      expect(api.requests.map((r) => r.body)).toEqual(['{"scope":"once"}', '{"scope":"run"}']);
      expect(once.stdout).toBe('att_1  approved (once)  run run_9  http_fetch POST https://api.example.com/releases\n');
      expect(forRun.stdout).toContain('approved (run)');
    });

    it('approves with edited arguments given inline, and refuses an edit that is not an object before calling the API', async () => {
      api.answer({ [`POST ${WS}/attention/att_1/approve`]: () => ({ status: 200, body: { ...OPEN, state: 'approved', scope: 'once' } }) });

      const edited = await sut(['approve', 'att_1', '--edit', '{"url":"https://api.example.com/releases/2","method":"POST"}']);
      const notObject = await sut(['approve', 'att_1', '--edit', '[1]']);

      expect(edited.code).toBe(0);
      expect(api.requests.map((r) => r.body)).toEqual(['{"scope":"once","arguments":{"url":"https://api.example.com/releases/2","method":"POST"}}']);
      expect(notObject.code).not.toBe(0);
      expect(notObject.stderr).toContain('--edit must be a JSON object');
    });

    it('rejects with the reason and refuses a reject without one before calling the API', async () => {
      api.answer({ [`POST ${WS}/attention/att_1/reject`]: () => ({ status: 200, body: { ...OPEN, state: 'rejected' } }) });

      const rejected = await sut(['reject', 'att_1', '--reason', 'not this release']);
      const missing = await sut(['reject', 'att_1']);

      expect(rejected.code).toBe(0);
      expect(rejected.stdout).toMatch(/^att_1 {2}rejected {2}run run_9/);
      expect(api.requests.map((r) => r.body)).toEqual(['{"reason":"not this release"}']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("error: required option '--reason <text>' not specified");
    });
  });

  describe('credential', () => {
    const META = { name: 'github_token', version: 2, keyId: 'mk-0123456789abcdef', createdBy: { kind: 'api_key', id: 'key1' }, createdAt: '2026-11-30T06:00:00.000Z' };

    it('puts the value read from standard input without its trailing newline and prints only metadata', async () => {
      api.answer({ [`PUT ${WS}/credentials/github_token`]: () => ({ status: 200, body: META }) });

      const result = await sut(['credential', 'set', 'github_token'], {}, 'ghp_s3cret\n');

      expect(result).toEqual({
        code: 0,
        stdout: 'credential github_token  version 2  key mk-0123456789abcdef  set 2026-11-30T06:00:00.000Z  by api_key:key1\n',
        stderr: '',
      });
      expect(JSON.parse(api.requests[0]!.body)).toEqual({ value: 'ghp_s3cret' });
    });

    it('strips one trailing newline only, keeping inner and earlier line breaks', async () => {
      api.answer({ [`PUT ${WS}/credentials/pem`]: () => ({ status: 200, body: { ...META, name: 'pem' } }) });

      await sut(['credential', 'set', 'pem'], {}, 'line1\nline2\n\n');

      expect(JSON.parse(api.requests[0]!.body)).toEqual({ value: 'line1\nline2\n' });
    });

    it.each([
      ['nothing', ''],
      ['a lone newline', '\n'],
      ['a lone CRLF', '\r\n'],
    ])('refuses %s on standard input before calling the API', async (_what, stdin) => {
      api.answer({});

      const result = await sut(['credential', 'set', 'github_token'], {}, stdin);

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: the credential value is empty/);
      expect(api.requests).toEqual([]);
    });

    it('takes no value argument', async () => {
      api.answer({});

      const result = await sut(['credential', 'set', 'github_token', 'ghp_s3cret']);

      expect(result.code).toBe(1);
      expect(result.stderr).toContain('too many arguments');
      expect(api.requests).toEqual([]);
    });

    it('lists credentials one per line and deletes one by name', async () => {
      api.answer({
        [`GET ${WS}/credentials`]: () => ({ status: 200, body: { items: [META] } }),
        [`DELETE ${WS}/credentials/github_token`]: () => ({ status: 204 }),
      });

      const list = await sut(['credential', 'list']);
      const deleted = await sut(['credential', 'delete', 'github_token']);

      expect(list.stdout).toBe('github_token  version 2  key mk-0123456789abcdef  set 2026-11-30T06:00:00.000Z  by api_key:key1\n');
      expect(deleted).toEqual({ code: 0, stdout: 'credential github_token deleted\n', stderr: '' });
    });

    it('exits 1 with the problem when deleting a credential that does not exist', async () => {
      api.answer({
        [`DELETE ${WS}/credentials/absent`]: () => ({
          status: 404,
          contentType: 'application/problem+json',
          body: { title: 'Not Found', status: 404, detail: 'no credential "absent"' },
        }),
      });

      const result = await sut(['credential', 'delete', 'absent']);

      expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: Not Found: no credential "absent"\n' });
    });
  });

  describe('errors', () => {
    it('prints the problem title, detail and each issue on its own line and exits 1', async () => {
      api.answer({
        [`POST ${WS}/workers/apply`]: () => ({
          status: 400,
          contentType: 'application/problem+json',
          body: {
            type: 'https://packetagent.dev/problems/invalid_definition',
            title: 'Invalid worker definition',
            status: 400,
            detail: '2 issues',
            errors: [
              { path: 'tools[1].tool', message: 'unknown tool "shell"' },
              { path: 'triggers[0].cron', message: 'not a cron expression' },
            ],
          },
        }),
      });

      const result = await sut(['worker', 'apply', '-f', file('invalid.yaml', YAML_DEFINITION)]);

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: ['error: Invalid worker definition: 2 issues', '  tools[1].tool: unknown tool "shell"', '  triggers[0].cron: not a cron expression', ''].join('\n'),
      });
    });

    it.each([401, 403])('exits 3 when the API answers %i', async (status) => {
      api.answer({
        [`GET ${WS}/runs/run_1`]: () => ({ status, contentType: 'application/problem+json', body: { title: status === 401 ? 'Unauthorized' : 'Forbidden', status } }),
      });

      const result = await sut(['run', 'get', 'run_1']);

      expect(result.code).toBe(ExitCode.auth);
      expect(result.stderr).toBe(`error: ${status === 401 ? 'Unauthorized' : 'Forbidden'}\n`);
    });

    it('reports the status line when the error body is not problem+json', async () => {
      api.answer({ [`GET ${WS}/runs/run_1`]: () => ({ status: 502, contentType: 'text/html', body: '<html>bad gateway</html>' }) });

      const result = await sut(['run', 'get', 'run_1']);

      expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: HTTP 502 Bad Gateway\n' });
    });

    it('exits 1 naming the fields when a success answer lacks what the CLI reads', async () => {
      api.answer({ [`POST ${WS}/deployments/dep_1/runs`]: () => ({ status: 201, body: { id: 'run_1' } }) });

      const result = await sut(['run', 'start', 'dep_1']);

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: unexpected answer to POST \/api\/v1\/workspaces\/ws_demo\/deployments\/dep_1\/runs\n {2}runId: /);
    });

    it('exits 2 naming the URL it tried when nothing listens there', async () => {
      const port = await freePort();

      const result = await sut(['run', 'get', 'run_1'], { PACKETAGENT_API_URL: `http://127.0.0.1:${port}` });

      expect(result.code).toBe(ExitCode.connection);
      expect(result.stderr).toBe(`error: cannot reach the PacketAgent API at http://127.0.0.1:${port}/api/v1/workspaces/ws_demo/runs/run_1: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    });

    it.each([
      ['API key', { PACKETAGENT_API_KEY: '' }, 'error: no API key: pass --api-key or set PACKETAGENT_API_KEY\n'],
      ['workspace', { PACKETAGENT_WORKSPACE: '' }, 'error: no workspace: pass --workspace or set PACKETAGENT_WORKSPACE\n'],
    ])('names the flag and the variable when the %s is missing', async (_what, env, message) => {
      api.answer({});

      const result = await sut(['run', 'get', 'run_1'], env);

      expect(result).toEqual({ code: 1, stdout: '', stderr: message });
      expect(api.requests).toEqual([]);
    });

    it('exits 1 on an API URL that is not http(s) or carries a password, and on an unknown option', async () => {
      const badUrl = await sut(['run', 'get', 'run_1', '--api-url', 'ftp://example.com']);
      const withPassword = await sut(['run', 'get', 'run_1', '--api-url', 'http://admin:hunter2@127.0.0.1:8484']);
      const unknown = await sut(['run', 'get', 'run_1', '--colour']);

      expect(badUrl).toEqual({ code: 1, stdout: '', stderr: 'error: the API URL "ftp://example.com" is not http or https (--api-url or PACKETAGENT_API_URL)\n' });
      expect(withPassword).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: the API URL must not carry a user name or password (--api-url or PACKETAGENT_API_URL)\n',
      });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("error: unknown option '--colour'");
    });
  });

  describe('options', () => {
    it('takes the URL, key and workspace from flags over the environment, and keeps a path prefix of the URL', async () => {
      api.answer({ [`GET /pa/api/v1/workspaces/ws_flag/runs/run_1`]: () => ({ status: 200, body: { id: 'run_1', state: 'queued' } }) });

      const result = await sut(['--api-url', `${api.url}/pa`, '--api-key', 'pa_flag_key', '--workspace', 'ws_flag', 'run', 'get', 'run_1'], {
        PACKETAGENT_API_URL: 'http://127.0.0.1:9',
        PACKETAGENT_WORKSPACE: 'ws_env',
      });

      expect(result.code).toBe(0);
      expect(api.requests[0]!.headers.authorization).toBe('Bearer pa_flag_key');
    });

    it('prints help and exits 0 for --help', async () => {
      const result = await sut(['deploy', '--help']);

      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Usage: packetagent deploy [options] <worker>');
    });
  });
});

describe('bin/packetagent.js', () => {
  const bin = resolve(__dirname, '../bin/packetagent.js');

  function sut(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
    return new Promise((done) => {
      const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stderr }));
    });
  }

  it('runs the CLI as a process whose exit code is the command result', async () => {
    const port = await freePort();

    const result = await sut(['run', 'get', 'run_1'], {
      PACKETAGENT_API_URL: `http://127.0.0.1:${port}`,
      PACKETAGENT_API_KEY: 'pa_key',
      PACKETAGENT_WORKSPACE: 'ws_demo',
    });

    expect(result.stderr).toContain(`error: cannot reach the PacketAgent API at http://127.0.0.1:${port}/`);
    expect(result.code).toBe(ExitCode.connection);
  });

  describe('its bundle cache', () => {
    let cache: string;
    const bundle = () => join(cache, 'cli.js');
    const manifest = () => join(cache, 'cli.inputs.json');

    beforeAll(() => {
      cache = mkdtempSync(join(tmpdir(), 'pa-cli-cache-'));
    });
    afterAll(() => rmSync(cache, { recursive: true, force: true }));

    function version(): Promise<{ code: number | null; stdout: string }> {
      return new Promise((done) => {
        const child = spawn(process.execPath, [bin, '--version'], { env: { ...process.env, PACKETAGENT_CLI_CACHE_DIR: cache }, stdio: ['ignore', 'pipe', 'inherit'] });
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.once('exit', (code) => done({ code, stdout }));
      });
    }

    it('builds the bundle on first use, runs from it, and prints the package version', async () => {
      const { version: expected } = JSON.parse(readFileSync(resolve(__dirname, '../../../package.json'), 'utf8')) as { version: string };

      const result = await version();

      expect(result).toEqual({ code: 0, stdout: `${expected}\n` });
      const inputs = Object.keys((JSON.parse(readFileSync(manifest(), 'utf8')) as { inputs: Record<string, string> }).inputs);
      expect(inputs).toEqual(expect.arrayContaining(['tools/cli/src/main.ts', 'tools/cli/src/cli.ts', 'tsconfig.base.json']));
      expect(readFileSync(bundle(), 'utf8')).toContain('packetagent');
    });

    it('keeps a bundle whose inputs are unchanged and rebuilds one whose input changed', async () => {
      await version();
      const built = readFileSync(manifest(), 'utf8');

      await version();
      expect(readFileSync(manifest(), 'utf8')).toBe(built);

      const before = JSON.parse(built) as { bundle: string; inputs: Record<string, string> };
      writeFileSync(manifest(), JSON.stringify({ ...before, inputs: { ...before.inputs, 'tools/cli/src/cli.ts': '0:0' } }));
      const result = await version();

      expect(result.code).toBe(0);
      const after = JSON.parse(readFileSync(manifest(), 'utf8')) as typeof before;
      expect(after.inputs).toEqual(before.inputs);
      expect(after.bundle).not.toBe(before.bundle);
    });
  });
});
