import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { publicKeyFingerprint } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

const ROOT = resolve(__dirname, '../../..');
// The sources, as tools/cli/bin/packetagent.js runs them in a checkout: a dist/ left by an
// earlier build would otherwise be what this tests.
const CLI = ['-r', require.resolve('@swc-node/register'), join(ROOT, 'tools/cli/src/main.ts')];

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';
const WORKER = [
  'apiVersion: packetagent/v1',
  'kind: Worker',
  'name: ade-cli',
  'model: { provider: scripted, model: quick }',
  'instructions: Do the task.',
  'tools: []',
  'exit: { finish: { criteria: [done] } }',
  'triggers: [{ manual: {} }]',
  '',
].join('\n');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Running {
  child: ChildProcessWithoutNullStreams;
  output: { stdout: string; stderr: string };
  exited: Promise<Outcome>;
}

describe('packetagent ade against the running app', () => {
  let env: ExecutionApp;
  let dir: string;
  let base: NodeJS.ProcessEnv;
  const children = new Set<ChildProcessWithoutNullStreams>();
  const publisher = generateKeyPairSync('ed25519');

  beforeAll(async () => {
    env = await startExecutionApp();
    env.writeScript('quick', `turns:\n  - toolCalls: [${FINISH}]\n`);
    dir = mkdtempSync(join(tmpdir(), 'pa-cli-ade-'));
    writeFileSync(join(dir, 'worker.yaml'), WORKER);
    writeFileSync(join(dir, 'publisher.key'), publisher.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(join(dir, 'publisher.pub'), publisher.publicKey.export({ type: 'spki', format: 'pem' }));
    // The API key's variables stay set for the door commands too: they must take the actor token, not the key.
    base = { ...process.env, SWC_NODE_PROJECT: join(ROOT, 'tools/cli/tsconfig.json'), PACKETAGENT_API_URL: env.sut.baseUrl, PACKETAGENT_API_KEY: env.owner, PACKETAGENT_WORKSPACE: env.ws };
    delete base['PACKETAGENT_ADE_TOKEN'];
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(args: string[], extra: NodeJS.ProcessEnv = {}): Running {
    const child = spawn(process.execPath, [...CLI, ...args], { cwd: dir, env: { ...base, ...extra }, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    child.stdin.end();
    const output = { stdout: '', stderr: '' };
    child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    const exited = new Promise<Outcome>((done) =>
      child.once('exit', (code) => {
        children.delete(child);
        done({ code, ...output });
      }),
    );
    return { child, output, exited };
  }
  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => start(args, extra).exited;

  it('issues a token, packages, signs, validates and deploys once per key, runs, and watches the run to success acknowledging the feed', async () => {
    // Independent steps side by side: each command is a process of its own.
    const trusted = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/packetade/publishers`, {
      body: { name: 'PacketADE build', publicKey: publisher.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
      headers: bearer(env.owner),
    });
    expect(trusted.status).toBe(201);
    const [issued, packaged] = await Promise.all([
      cli(['--json', 'ade', 'actor', 'issue', 'ide', '--operations', 'all', '--expires-in', '1d']),
      cli(['ade', 'package', '-f', 'worker.yaml', '--repository', 'https://git.example.com/ops/workers.git', '--commit', '3f2a9c1d0b7e', '-o', 'pkg.json']),
    ]);
    expect(issued).toMatchObject({ code: 0, stderr: '' });
    const token = (JSON.parse(issued.stdout) as { token: string }).token;
    const door = { PACKETAGENT_ADE_TOKEN: token };
    expect(packaged.code).toBe(0);
    const digest = /package digest ([0-9a-f]{64})/.exec(packaged.stdout)![1]!;
    expect(await cli(['ade', 'sign', '-f', 'pkg.json', '--key', 'publisher.key', '-o', 'pkg.dsse.json'])).toMatchObject({ code: 0 });

    const [validated, unsigned] = await Promise.all([cli(['ade', 'validate', 'pkg.dsse.json'], door), cli(['ade', 'validate', 'pkg.json'], door)]);
    expect(validated).toMatchObject({ code: 0, stderr: '' });
    expect(validated.stdout.split('\n')).toEqual(
      expect.arrayContaining(['worker ade-cli', `package digest ${digest}`, `signed by ${publicKeyFingerprint(publisher.publicKey)} (trusted publisher)`, 'accepted', 'preflight: ready']),
    );
    expect(unsigned.code).toBe(4);
    expect(unsigned.stdout).toMatch(/^unsigned$/m);

    const first = await cli(['ade', 'deploy', 'pkg.dsse.json', '--idempotency-key', 'release-1'], door);
    const again = await cli(['ade', 'deploy', 'pkg.dsse.json', '--idempotency-key', 'release-1'], door);
    expect([first.code, again.code]).toEqual([0, 0]);
    const deploymentId = /^deployment (\S+) created$/m.exec(first.stdout)![1]!;
    expect(again.stdout).toMatch(new RegExp(`^deployment ${deploymentId} unchanged: `, 'm'));
    expect(first.stdout).toContain(`package digest ${digest}`);
    expect(first.stdout).toMatch(/^worker ade-cli \(\S+\) version 1$/m);

    const run = await cli(['ade', 'run', deploymentId, '--input', '{"ticket":42}', '--idempotency-key', 'run-1'], door);
    expect(run.code).toBe(0);
    const runId = /^run (\S+) {2}/.exec(run.stdout)![1]!;

    const watched = await cli(['ade', 'watch', '--ack', '--until-terminal', runId], door);
    expect(watched).toMatchObject({ code: 0, stderr: '' });
    const lines = watched.stdout.split('\n').filter(Boolean).map((line) => line.split('  '));
    expect(lines[0]).toEqual([expect.stringMatching(/^\d+$/), expect.any(String), 'deployment.created', `deployment-${deploymentId}`]);
    expect(lines[lines.length - 1]!.slice(2)).toEqual(['run.succeeded', `run-${runId}`]);
    expect(lines.map(([, , type]) => type)).toContain('run.admitted');

    const acknowledged = await env.sut.request<{ cursor: string; revision: number }>('GET', '/api/v1/packetade/events/ack', { headers: bearer(token) });
    expect(acknowledged.body.cursor).toBe(lines[lines.length - 1]![0]);
    expect(acknowledged.body.revision).toBe(lines.length);

    // From the start of the feed, stopped by SIGTERM once it has printed the run's end: exit 0, the cursor left where it was.
    const following = start(['ade', 'watch', '--after', '0'], door);
    await eventually(() => following.output.stdout.includes(`run.succeeded  run-${runId}`), { what: 'the second watch to reach the run' });
    following.child.kill('SIGTERM');
    const stopped = await following.exited;
    expect({ code: stopped.code, stderr: stopped.stderr }).toEqual({ code: 0, stderr: '' });
    expect(stopped.stdout.startsWith(watched.stdout)).toBe(true);
    const after = await env.sut.request<{ cursor: string }>('GET', '/api/v1/packetade/events/ack', { headers: bearer(token) });
    expect(after.body.cursor).toBe(acknowledged.body.cursor);
  }, 60_000);
});
