import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

    const refused = await cli(['deploy', 'release-audit']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: worker release-audit cannot run here yet, \d+ missing \(deploy with --accept-missing/);
    expect(refused.stderr).toMatch(/^ {2}credential slack_release_channel: /m);

    const deployed = await cli(['deploy', 'release-audit', '--accept-missing']);
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toMatch(/^not ready: \d+ missing; its runs fail until these exist:$/m);
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
    const deployed = await cli(['deploy', 'release-audit', '--accept-missing']);
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
    const deploymentId = /^deployment (\S+)/m.exec((await cli(['deploy', 'release-audit', '--accept-missing'])).stdout)![1]!;
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
    expect(outcome.stderr).toMatch(/^ {2}tools\[0\]\.resources\[0\]: not a URL origin or glob$/m);
    expect(outcome.stderr.split('not a URL origin or glob')).toHaveLength(2);

    const workers = await sut.request<{ items: Array<{ name: string }> }>('GET', `/api/v1/workspaces/${env['PACKETAGENT_WORKSPACE']!}/workers`, {
      headers: { authorization: `Bearer ${env['PACKETAGENT_API_KEY']!}` },
    });
    expect(workers.status).toBe(200);
    expect(workers.body.items.map((worker) => worker.name)).not.toContain('broken');
  });

  it('refuses to stop or pause a finished run with a conflict, and run get says why it ended', async () => {
    expect((await cli(['worker', 'apply', '-f', 'examples/release-audit.worker.yaml'])).code).toBe(0);
    const deploymentId = /^deployment (\S+)/m.exec((await cli(['deploy', 'release-audit', '--accept-missing'])).stdout)![1]!;
    const runId = (await cli(['run', 'start', deploymentId])).stdout.trim();
    expect((await cli(['run', 'stop', runId, '--reason', 'started by mistake'])).code).toBe(0);
    // Cancelled at once when not yet claimed; otherwise the supervisor honours the request.
    const ended = await eventually(async () => {
      const read = await cli(['run', 'get', runId]);
      return /^state: cancelled$/m.test(read.stdout) && read;
    }, { what: 'the run to be cancelled' });
    expect(ended.stdout).toMatch(/^reason: started by mistake( \(by api key \S+\))?$/m);

    const stop = await cli(['run', 'stop', runId]);
    const pause = await cli(['run', 'pause', runId]);

    expect(stop).toEqual({ code: 1, stdout: '', stderr: `error: Conflict: run ${runId} is cancelled; it cannot be stopped\n` });
    expect(pause).toEqual({ code: 1, stdout: '', stderr: `error: Conflict: run ${runId} is cancelled; it cannot be paused\n` });
  });

  it("renders the health-report demo for the server's own port, and the rendered worker applies", async () => {
    const port = new URL(sut.baseUrl).port;
    const rendered = await new Promise<Outcome>((done) => {
      const child = spawn(process.execPath, [join(ROOT, 'examples/health-report-demo.mjs'), 'render'], {
        cwd: ROOT,
        env: { ...process.env, PACKETAGENT_PORT: port, PACKETAGENT_DATA_DIR: dir, PACKETAGENT_HTTP_ALLOW_PRIVATE: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stdout, stderr }));
    });
    expect(rendered).toMatchObject({ code: 0, stderr: '' });
    expect(rendered.stdout).toContain(`PACKETAGENT_HTTP_ALLOW_PRIVATE=127.0.0.1:${port},127.0.0.1:8486\n`);
    const script = readFileSync(join(dir, 'demo/scripts/health-report.yaml'), 'utf8');
    expect(script).toContain(`url: "http://127.0.0.1:${port}/healthz"`);
    expect(script).not.toContain('8484');

    const applied = await cli(['--json', 'worker', 'apply', '-f', join(dir, 'demo/health-report.worker.yaml')]);
    expect(applied.code).toBe(0);
    const { workerId, version } = JSON.parse(applied.stdout) as { workerId: string; version: number };
    const stored = await sut.request<{ definition: { tools: Array<{ tool: string; resources: string[] }> } }>(
      'GET',
      `/api/v1/workspaces/${env['PACKETAGENT_WORKSPACE']!}/workers/${workerId}/versions/${version}`,
      { headers: { authorization: `Bearer ${env['PACKETAGENT_API_KEY']!}` } },
    );
    expect(stored.body.definition.tools.find((grant) => grant.tool === 'http_fetch')!.resources).toEqual([`http://127.0.0.1:${port}/healthz`]);
  });

  it('lists and shows templates, makes a demo worker from one, and drafts a worker without a model, labelled so', async () => {
    const listed = await cli(['template', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^support-inbox-triage +Support +\*\/15 \* \* \* \* +Watches a shared mailbox/m);
    expect(listed.stdout.trim().split('\n')).toHaveLength(6);

    const shown = await cli(['template', 'show', 'release-audit']);
    expect(shown.stdout).toMatch(/^not ready: \d+ missing$/m);
    expect(shown.stdout).toContain('kind: Worker');

    const made = await cli(['template', 'instantiate', 'research-summarizer', '--name', 'cli-summary-demo', '--demo']);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^worker cli-summary-demo \(\S+\) version 1 digest sha256:[0-9a-f]{64} \(scripted demo\)$/m);
    expect(made.stdout).toMatch(/^example input: \{"text":/m);
    const unknown = await cli(['template', 'instantiate', 'nope', '--name', 'x-y']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no template "nope"');

    const out = join(dir, 'drafted.yaml');
    const drafted = await cli(['worker', 'draft', 'Every friday at 4 pm draft customer release notes', '--output', out]);
    expect(drafted.code).toBe(0);
    expect(drafted.stdout).toMatch(/^drafted without a model \(from the "Weekly release notes" template: /m);
    expect(drafted.stdout).toMatch(/^left out email_send: the request does not ask for what email_send does$/m);
    const applied = await cli(['worker', 'apply', '-f', out]);
    expect(applied.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toMatch(/^# Drafted without a model/);
  });

  it('exits 3 for a key the API refuses and 2 when the API cannot be reached', async () => {
    expect((await cli(['run', 'get', 'nope'], { PACKETAGENT_API_KEY: 'pa_forged_key' })).code).toBe(3);
    const unreachable = await cli(['run', 'get', 'nope'], { PACKETAGENT_API_URL: `http://127.0.0.1:${await freePort()}` });
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain('127.0.0.1');
  });
});
