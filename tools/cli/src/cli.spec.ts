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
    it('creates the worker when none has its name and posts the YAML file verbatim as application/yaml', async () => {
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [{ id: 'wrk_other', name: 'other' }], nextCursor: null } }),
        [`POST ${WS}/workers`]: () => ({ status: 201, body: { id: 'wrk_1' } }),
        [`POST ${WS}/workers/wrk_1/versions`]: () => ({ status: 201, body: { version: 1, digest: DIGEST, created: true } }),
      });

      const result = await sut(['worker', 'apply', '-f', file('release-audit.worker.yaml', YAML_DEFINITION)]);

      expect(result).toEqual({ code: 0, stdout: `worker release-audit (wrk_1) version 1 digest sha256:${DIGEST}\n`, stderr: '' });
      const [list, create, version] = api.requests;
      expect(list!.headers.authorization).toBe('Bearer pa_key1_secret');
      expect(create!.headers['content-type']).toBe('application/json');
      expect(JSON.parse(create!.body)).toEqual({ name: 'release-audit', description: 'Verifies release evidence.' });
      expect(version!.headers['content-type']).toBe('application/yaml');
      expect(version!.body).toBe(YAML_DEFINITION);
    });

    it('reuses the worker it finds by name on a later page and says unchanged when the API created no version', async () => {
      const definition = JSON.stringify({ apiVersion: 'packetagent/v1', kind: 'Worker', name: 'release-audit', instructions: 'x' });
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [{ id: 'wrk_0', name: 'first' }], nextCursor: 'c2' } }),
        [`GET ${WS}/workers?cursor=c2`]: () => ({ status: 200, body: { items: [{ id: 'wrk_7', name: 'release-audit' }], nextCursor: null } }),
        [`POST ${WS}/workers/wrk_7/versions`]: () => ({ status: 200, body: { version: 4, digest: `sha256:${DIGEST}`, created: false } }),
      });

      const result = await sut(['worker', 'apply', '-f', file('definition.json', definition)]);

      expect(result.stdout).toBe(`worker release-audit (wrk_7) version 4 digest sha256:${DIGEST} unchanged\n`);
      expect(result.code).toBe(ExitCode.ok);
      expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${WS}/workers`, `GET ${WS}/workers?cursor=c2`, `POST ${WS}/workers/wrk_7/versions`]);
      expect(api.requests[2]!.headers['content-type']).toBe('application/json');
      expect(api.requests[2]!.body).toBe(definition);
    });

    it('tells JSON from YAML by content when the file has neither extension, and reads standard input for -', async () => {
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: [{ id: 'wrk_7', name: 'release-audit' }] }),
        [`POST ${WS}/workers/wrk_7/versions`]: () => ({ status: 201, body: { version: 5, digest: DIGEST, created: true } }),
      });

      const fromFile = await sut(['worker', 'apply', '-f', file('definition', ' {"name": "release-audit"}')]);
      const fromStdin = await sut(['worker', 'apply', '-f', '-'], {}, YAML_DEFINITION);

      expect([fromFile.code, fromStdin.code]).toEqual([0, 0]);
      const posts = api.requests.filter((r) => r.method === 'POST');
      expect(posts.map((r) => r.headers['content-type'])).toEqual(['application/json', 'application/yaml']);
    });

    it('uses the worker someone else created between its lookup and its create when the create answers 409', async () => {
      let lists = 0;
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: lists++ ? [{ id: 'wrk_3', name: 'release-audit' }] : [], nextCursor: null } }),
        [`POST ${WS}/workers`]: () => ({ status: 409, contentType: 'application/problem+json', body: { title: 'Conflict', status: 409 } }),
        [`POST ${WS}/workers/wrk_3/versions`]: () => ({ status: 201, body: { version: 1, digest: DIGEST, created: true } }),
      });

      const result = await sut(['worker', 'apply', '-f', file('raced.yaml', YAML_DEFINITION)]);

      expect(result).toEqual({ code: 0, stdout: `worker release-audit (wrk_3) version 1 digest sha256:${DIGEST}\n`, stderr: '' });
    });

    it('prints a JSON summary with --json', async () => {
      api.answer({
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [], nextCursor: null } }),
        [`POST ${WS}/workers`]: () => ({ status: 201, body: { id: 'wrk_2' } }),
        [`POST ${WS}/workers/wrk_2/versions`]: () => ({ status: 201, body: { version: 1, digest: DIGEST, created: true } }),
      });

      const result = await sut(['worker', 'apply', '--json', '-f', file('w.yaml', YAML_DEFINITION)]);

      expect(JSON.parse(result.stdout)).toEqual({
        workerId: 'wrk_2',
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
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(/^error: broken\.yaml:\d+:\d+: not valid YAML: /);
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
        [`GET ${WS}/workers`]: () => ({ status: 200, body: { items: [{ id: 'wrk_1', name: 'release-audit' }], nextCursor: null } }),
        [`POST ${WS}/workers/wrk_1/versions`]: () => ({
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
});
