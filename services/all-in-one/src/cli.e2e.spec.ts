import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@packetagent/testing';
import { startTestApp, type TestApp } from './testing/app.testkit';

jest.mock('@fastify/cookie', () => {
  const nodeLoader = require('node:module') as { _load(request: string, parent: null, isMain: boolean): unknown };
  return nodeLoader._load(require.resolve('@fastify/cookie'), null, false);
});

const ROOT = resolve(__dirname, '../../..');
const BIN = join(ROOT, 'tools/cli/bin/packetagent.js');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('packetagent CLI against the running app', () => {
  let sut: TestApp;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  beforeAll(async () => {
    sut = await startTestApp();
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: sut.setupToken, email: 'cli@example.com', password: 'correct horse battery staple', workspace: 'CLI' },
    });
    env = { ...process.env, PACKETAGENT_API_URL: sut.baseUrl, PACKETAGENT_API_KEY: setup.body.apiKey, PACKETAGENT_WORKSPACE: setup.body.workspaceId };
    dir = mkdtempSync(join(tmpdir(), 'pa-cli-'));
  });
  afterAll(async () => {
    await sut.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}): Promise<Outcome> =>
    new Promise((done) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stdout, stderr }));
    });

  it('applies, deploys, starts a run once per idempotency key, and reads it back', async () => {
    const applied = await cli(['worker', 'apply', '-f', 'examples/release-audit.worker.yaml']);
    expect(applied).toMatchObject({ code: 0 });
    expect(applied.stdout).toMatch(/^worker release-audit \(\S+\) version 1 digest sha256:[0-9a-f]{64}/m);
    const again = await cli(['worker', 'apply', '-f', 'examples/release-audit.worker.yaml']);
    expect(again.stdout).toMatch(/unchanged/);

    const deployed = await cli(['deploy', 'release-audit']);
    expect(deployed.code).toBe(0);
    const deploymentId = /^deployment (\S+)/m.exec(deployed.stdout)![1]!;
    expect(deployed.stdout).toMatch(/webhook trg_[0-9a-f]{24}: .*\/hooks\/trg_[0-9a-f]{24}/);
    expect(deployed.stdout).toMatch(/secret: whsec_/);

    const first = await cli(['run', 'start', deploymentId, '--input', '{"release":"2026.11.3"}', '--idempotency-key', 'rel-1']);
    const second = await cli(['run', 'start', deploymentId, '--input', '{"release":"2026.11.3"}', '--idempotency-key', 'rel-1']);
    expect([first.code, second.code]).toEqual([0, 0]);
    const runId = first.stdout.trim();
    expect(second.stdout).toContain(runId);

    const read = await cli(['run', 'get', runId]);
    expect(read.code).toBe(0);
    expect(read.stdout).toMatch(/^state: queued$/m);
  });

  it('reports a refused definition path by path and exits 1', async () => {
    const file = join(dir, 'broken.worker.yaml');
    writeFileSync(file, 'apiVersion: packetagent/v1\nkind: Worker\nname: broken\ninstructions: x\nmodel: { preset: default }\nexit: { finish: { criteria: [done] } }\ntools:\n  - { tool: http_fetch, verbs: [GET], resources: ["*"] }\n');
    const outcome = await cli(['worker', 'apply', '-f', file]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/tools\[0\]\.resources\[0\]: not a URL origin or glob/);
  });

  it('exits 3 for a key the API refuses and 2 when the API cannot be reached', async () => {
    expect((await cli(['run', 'get', 'nope'], { PACKETAGENT_API_KEY: 'pa_forged_key' })).code).toBe(3);
    const unreachable = await cli(['run', 'get', 'nope'], { PACKETAGENT_API_URL: `http://127.0.0.1:${await freePort()}` });
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain('127.0.0.1');
  });
});
