import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CommandBus } from '@packetagent/bus';
import { PolicyCommands } from '@packetagent/contracts';
import { eventually, freePort } from '@packetagent/testing';
import { startTestApp, type TestApp } from './testing/app.testkit';

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

  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}, input = ''): Promise<Outcome> =>
    new Promise((done) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...env, ...extra }, stdio: ['pipe', 'pipe', 'pipe'] });
      child.stdin.end(input);
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

    const logs = await cli(['run', 'logs', runId]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/^\S+ +1 {2}run\.admitted$/m);
  });

  it('stops, pauses, resumes and lists runs', async () => {
    expect((await cli(['worker', 'apply', '-f', 'examples/release-audit.worker.yaml'])).code).toBe(0);
    const deployed = await cli(['deploy', 'release-audit']);
    const deploymentId = /^deployment (\S+)/m.exec(deployed.stdout)![1]!;
    const kept = (await cli(['run', 'start', deploymentId])).stdout.trim();
    const stopped = (await cli(['run', 'start', deploymentId])).stdout.trim();

    const paused = await cli(['run', 'pause', kept, '--reason', 'checking the input']);
    expect(paused).toMatchObject({ code: 0, stderr: '' });
    expect(paused.stdout).toMatch(new RegExp(`^${kept} {2}\\w+ {2}${deploymentId} .*\\(pause requested\\)$`, 'm'));
    const resumed = await cli(['run', 'resume', kept]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).not.toContain('pause requested');
    const stop = await cli(['--json', 'run', 'stop', stopped, '--reason', 'started by mistake']);
    expect(stop.code).toBe(0);
    // Not yet started runs are cancelled at once; one already admitted keeps the request for the supervisor.
    expect(JSON.parse(stop.stdout)).toEqual(expect.objectContaining({ id: stopped }));
    const stopView = JSON.parse(stop.stdout) as { state: string; stopRequested: boolean };
    expect(stopView.state === 'cancelled' || stopView.stopRequested).toBe(true);

    const listed = await cli(['run', 'list', '--deployment', deploymentId]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n').filter(Boolean).map((line) => line.split('  ')[0]).sort()).toEqual([kept, stopped].sort());
    const one = await cli(['--json', 'run', 'list', '--deployment', deploymentId, '--limit', '1']);
    expect((JSON.parse(one.stdout) as { items: unknown[] }).items).toHaveLength(1);
    const badState = await cli(['run', 'list', '--state', 'sleeping']);
    expect(badState.code).toBe(1);
    expect(badState.stderr).toMatch(/^ {2}state: /m);
    const absent = await cli(['run', 'stop', 'run_absent']);
    expect(absent.code).toBe(1);
  });

  it('stores a credential read from standard input and never prints its value', async () => {
    const value = 'xoxb-cli-e2e-very-secret-token';
    const stored = await cli(['credential', 'set', 'slack_release_channel'], {}, `${value}\n`);
    expect(stored).toMatchObject({ code: 0, stderr: '' });
    expect(stored.stdout).toMatch(/^credential slack_release_channel {2}version 1 /);
    const empty = await cli(['credential', 'set', 'slack_release_channel'], {}, '\n');
    expect(empty.code).toBe(1);

    const listed = await cli(['credential', 'list']);
    const json = await cli(['--json', 'credential', 'list']);
    expect(listed.stdout).toMatch(/^slack_release_channel {2}version 1 /m);
    expect(JSON.parse(json.stdout)).toEqual({ items: [expect.objectContaining({ name: 'slack_release_channel', version: 1 })] });
    for (const outcome of [stored, empty, listed, json]) expect(outcome.stdout + outcome.stderr).not.toContain(value);

    expect((await cli(['credential', 'set', 'scratch_token'], {}, 'temporary')).code).toBe(0);
    expect(await cli(['credential', 'delete', 'scratch_token'])).toEqual({ code: 0, stdout: 'credential scratch_token deleted\n', stderr: '' });
    expect((await cli(['credential', 'list'])).stdout).not.toContain('scratch_token');
  });

  it('lists an attention record, approves one for the run and rejects another with a reason', async () => {
    expect((await cli(['worker', 'apply', '-f', 'examples/release-audit.worker.yaml'])).code).toBe(0);
    const deploymentId = /^deployment (\S+)/m.exec((await cli(['deploy', 'release-audit'])).stdout)![1]!;
    const runId = (await cli(['run', 'start', deploymentId])).stdout.trim();
    const workspaceId = env['PACKETAGENT_WORKSPACE']!;
    const ask = (text: string) =>
      sut.app.get(CommandBus).request(PolicyCommands.authorize, {
        workspaceId,
        runId,
        tool: 'slack_post',
        verb: 'post',
        resource: '#releases',
        credentials: [],
        callDigest: createHash('sha256').update(text).digest('hex'),
        arguments: { channel: '#releases', text },
      });
    // Policy learns of the run from run.admitted through the relay.
    const first = await eventually(async () => {
      const result = await ask('release is missing evidence');
      return result.decision !== 'deny' && result;
    }, { what: 'policy to know the run' });
    const second = await ask('release has no changelog');
    expect([first.decision, second.decision]).toEqual(['approval_required', 'approval_required']);

    const open = await cli(['attention', 'list', '--state', 'open']);
    expect(open.code).toBe(0);
    expect(open.stdout).toMatch(new RegExp(`^${first.approvalId!} {2}open {2}run ${runId} {2}slack_post post #releases`, 'm'));
    expect(open.stdout).toContain(second.approvalId!);

    const approved = await cli(['approve', first.approvalId!, '--for-run']);
    expect(approved).toMatchObject({ code: 0, stderr: '' });
    expect(approved.stdout).toMatch(/ {2}approved \(run\) {2}/);
    const rejected = await cli(['--json', 'reject', second.approvalId!, '--reason', 'no changelog needed']);
    expect(JSON.parse(rejected.stdout)).toEqual(expect.objectContaining({ id: second.approvalId, state: 'rejected', reason: 'no changelog needed' }));
    const twice = await cli(['approve', second.approvalId!]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^error: /);
    expect((await cli(['attention', 'list', '--state', 'open'])).stdout).not.toContain(first.approvalId!);
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
