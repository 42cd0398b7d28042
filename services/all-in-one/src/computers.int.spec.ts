import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { eventually, hostProcesses, sshdAvailable, SshdProcess } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';

function worker(name: string, tools: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Run the commands on the build box.
tools: ${tools}
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

const describeWithSshd = sshdAvailable() ? describe : describe.skip;

/** Workers run commands on a registered computer: a real sshd, real policy, vault, supervisor and sandbox. */
describeWithSshd('run_command on a computer over SSH', () => {
  jest.setTimeout(120_000);
  let env: ExecutionApp;
  let sshd: SshdProcess;
  let root: string;
  const credentialValue = `cred-${process.pid}-value-that-stays-home`;

  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => env.sut.request<T>(method, `/api/v1/workspaces/${env.ws}${path}`, { ...(body === undefined ? {} : { body }), headers: bearer(env.owner) });
  const register = (name: string, policy: Record<string, string>, extra: Record<string, unknown> = {}) =>
    api('PUT', `/computers/${name}`, { kind: 'ssh', ssh: { host: '127.0.0.1', port: sshd.port, user: sshd.user, hostKeys: [sshd.hostFingerprint()], keyCredential: 'build_box_key' }, roots: [root], policy, ...extra });
  const toolResults = async (runId: string) => (await env.events(runId)).filter((event) => event.type === 'run.tool_result').map((event) => event.data);

  beforeAll(async () => {
    sshd = await SshdProcess.create();
    await sshd.start();
    root = await mkdtemp(join(tmpdir(), 'pa-build-root-'));
    env = await startExecutionApp({ env: { PACKETAGENT_COMPUTER_PROBE_INTERVAL_MS: '3600000' } });
    expect((await api('PUT', '/credentials/build_box_key', { value: await sshd.privateKey() })).status).toBeLessThan(300);
    expect((await api('PUT', '/credentials/ops_token', { value: credentialValue })).status).toBeLessThan(300);
  });
  afterAll(async () => {
    await env?.close();
    await sshd?.dispose();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('registers a computer only with a pinned host key, confirming the one presented, and probes it online', async () => {
    const unpinned = await api('PUT', '/computers/build-box', { kind: 'ssh', ssh: { host: '127.0.0.1', port: sshd.port, user: sshd.user, keyCredential: 'build_box_key' }, roots: [root], policy: { shell: 'allow', write: 'allow', network: 'allow' } });
    expect(unpinned.status).toBe(409);
    expect(unpinned.body).toMatchObject({ code: 'host_key_unpinned' });
    expect(JSON.stringify(unpinned.body)).toContain(sshd.hostFingerprint());
    const pinned = await api<{ ssh: { hostKeys: string[] }; version: number }>('PUT', '/computers/build-box', { kind: 'ssh', ssh: { host: '127.0.0.1', port: sshd.port, user: sshd.user, keyCredential: 'build_box_key' }, roots: [root], policy: { shell: 'allow', write: 'allow', network: 'allow' }, acceptHostKey: sshd.hostFingerprint() });
    expect(pinned.status).toBe(200);
    expect(pinned.body.ssh.hostKeys).toEqual([sshd.hostFingerprint()]);
    const probed = await api<{ status: { state: string; observedAt: string } }>('POST', '/computers/build-box/probe', {});
    expect(probed.body.status).toMatchObject({ state: 'online', observedAt: expect.any(String) });
  });

  it("runs a granted worker's command there: exit code and output in the timeline, none of the run's credentials in its environment", async () => {
    await writeFile(join(root, 'hello.sh'), 'echo "hello from $(hostname)"; env; exit 4\n');
    env.writeScript('remote', `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "sh hello.sh", computer: build-box } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(
      worker('remote', `[{ tool: run_command, verbs: [exec], resources: ["sh *"], computers: [build-box], approval: never }, { tool: http_fetch, verbs: [GET], resources: ["https://api.example.com/*"], credentials: [ops_token], approval: never }]`),
    );
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000)).toBe('succeeded');
    const [result] = await toolResults(runId);
    expect(result).toMatchObject({ tool: 'run_command', ok: false, output: { exitCode: 4, state: 'exited', computer: 'build-box', error: { code: 'command_failed' } } });
    expect(String((result!['output'] as { stdout: string }).stdout)).toContain('hello from');
    expect(JSON.stringify(await env.events(runId))).not.toContain(credentialValue);
    expect(JSON.stringify(result)).not.toContain(credentialValue);
    const exec = await env.sut.db.pool.query<{ driver: string; computer: string; state: string }>('SELECT driver, computer, state FROM sandbox.execs WHERE run_id = $1', [runId]);
    expect(exec.rows).toEqual([{ driver: 'ssh', computer: 'build-box', state: 'exited' }]);
  });

  it('runs a stdio MCP server on the computer: its tools pinned there when the version is created, called with the key policy grants the run', async () => {
    const sdk = (path: string) => JSON.stringify(require.resolve(`@modelcontextprotocol/sdk/${path}`));
    await writeFile(
      join(root, 'where-mcp.cjs'),
      [
        `const { McpServer } = require(${sdk('server/mcp.js')});`,
        `const { StdioServerTransport } = require(${sdk('server/stdio.js')});`,
        "const server = new McpServer({ name: 'where', version: '1.0.0' });",
        "server.registerTool('where', { description: 'Answers the directory it runs in' }, async () => ({ content: [{ type: 'text', text: process.cwd() }] }));",
        'void server.connect(new StdioServerTransport());',
      ].join('\n'),
    );
    expect((await register('mcp-box', { shell: 'allow', write: 'allow', network: 'allow' })).status).toBe(200);
    const mcpWorker = (name: string, computer: string) => `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Ask the build box where it is.
mcp:
  - { name: builds, transport: stdio, command: node, args: [where-mcp.cjs], computer: ${computer} }
tools:
  - { tool: "mcp:builds/where", computers: [${computer}], approval: never }
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
    env.writeScript('remote-mcp', `turns:\n  - toolCalls: [{ name: builds__where, arguments: {} }]\n  - toolCalls: [${FINISH}]\n`);
    const runId = await env.startRun(await env.deploy(mcpWorker('remote-mcp', 'mcp-box')));
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000)).toBe('succeeded');
    const [result] = await toolResults(runId);
    expect(result).toMatchObject({ tool: 'mcp', ok: true, output: { preview: await realpath(root) } });
    const decided = (await env.events(runId)).find((event) => event.type === 'run.tool_decided');
    expect(decided?.data).toMatchObject({ tool: 'mcp', resource: 'builds/where', decision: 'allow' });
    await eventually(() => hostProcesses(join(root, 'where-mcp.cjs')).length === 0 && hostProcesses('where-mcp.cjs').length === 0, { what: 'the server on the computer to end with the run' });

    // Pinning would start the program there with nobody asked: refused on a computer that asks first.
    expect((await register('asking-box', {})).status).toBe(200);
    const created = await env.sut.request<{ id: string }>('POST', `/api/v1/workspaces/${env.ws}/workers`, { body: { name: 'asking-mcp' }, headers: bearer(env.owner) });
    const version = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/workers/${created.body.id}/versions`, { raw: mcpWorker('asking-mcp', 'asking-box'), headers: { ...bearer(env.owner), 'content-type': 'application/yaml' } });
    expect(version.status).toBe(400);
    expect(version.text).toContain('asks a person before each command');
  });

  it('denies a computer the grant does not name, secrets a computer does not take, and asks a person where the computer says ask', async () => {
    expect((await register('other-box', { shell: 'allow', write: 'allow', network: 'allow' })).status).toBe(200);
    expect((await register('careful-box', {})).status).toBe(200);
    env.writeScript(
      'denials',
      `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "sh hello.sh", computer: other-box } }]\n  - toolCalls: [{ name: run_command, arguments: { command: "sh hello.sh", computer: build-box, secrets: { OPS_TOKEN: ops_token } } }]\n  - toolCalls: [{ name: run_command, arguments: { command: "sh hello.sh", computer: careful-box } }]\n  - toolCalls: [${FINISH}]\n`,
    );
    const deploymentId = await env.deploy(worker('denials', `[{ tool: run_command, verbs: [exec], resources: ["sh *"], computers: [build-box, careful-box], credentials: [ops_token], approval: never }]`));
    const runId = await env.startRun(deploymentId);
    await eventually(async () => (await env.events(runId)).some((event) => event.type === 'run.tool_decided' && event.data['decision'] === 'approval_required'), { timeoutMs: 60_000, what: 'the careful computer to ask' });
    const decisions = (await env.events(runId)).filter((event) => event.type === 'run.tool_decided').map((event) => [event.data['decision'], (event.data['reason'] as { code: string }).code]);
    expect(decisions).toEqual([
      ['deny', 'computer_not_granted'],
      ['deny', 'computer_secrets_denied'],
      ['approval_required', 'approval_required'],
    ]);
    expect((await env.sut.db.pool.query('SELECT 1 FROM sandbox.execs WHERE run_id = $1', [runId])).rowCount).toBe(0);
    await api('POST', `/runs/${runId}/stop`, {});
  });

  it('stops a command mid-run: the remote process tree is gone and the run ends cancelled', async () => {
    const marker = `63.${process.pid}`;
    await writeFile(join(root, 'long.sh'), `sleep ${marker} & sleep ${marker}\n`);
    env.writeScript('stopped', `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "sh long.sh", computer: build-box } }]\n  - toolCalls: [${FINISH}]\n`);
    const runId = await env.startRun(await env.deploy(worker('stopped', '[{ tool: run_command, verbs: [exec], resources: ["sh *"], computers: [build-box], approval: never }]')));
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 2, { timeoutMs: 60_000, what: 'the remote command to run' });
    expect((await api('POST', `/runs/${runId}/stop`, {})).status).toBe(200);
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 0, { timeoutMs: 15_000, what: 'the remote tree to be gone' });
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000)).toBe('cancelled');
    const recorded = await eventually(async () => (await env.sut.db.pool.query<{ result: { state: string; killConfirmed: boolean } | null }>('SELECT result FROM sandbox.execs WHERE run_id = $1', [runId])).rows[0]?.result ?? false, { what: 'the exec to be recorded' });
    expect(recorded).toMatchObject({ state: 'killed', limit: 'cancelled', killConfirmed: true });
  });

  it('ends the run abandoned(transport_lost) when the session is killed mid-command, with the receipt, and never runs it again', async () => {
    const marker = `64.${process.pid}`;
    await writeFile(join(root, 'cut.sh'), `echo started; sleep ${marker}\n`);
    env.writeScript('cut', `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "sh cut.sh", computer: build-box } }]\n  - toolCalls: [${FINISH}]\n`);
    const runId = await env.startRun(await env.deploy(worker('cut', '[{ tool: run_command, verbs: [exec], resources: ["sh *"], computers: [build-box], approval: never }]')));
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 1, { timeoutMs: 60_000, what: 'the remote command to run' });
    sshd.killSessions();
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000)).toBe('abandoned');
    const events = await env.events(runId);
    const abandoned = events.find((event) => event.type === 'run.abandoned')!;
    expect(abandoned.data).toMatchObject({ cause: 'transport_lost', effect: { tool: 'run_command', idempotencyKey: expect.stringContaining(runId) }, attentionId: expect.any(String) });
    expect(events.find((event) => event.type === 'effect.failed')?.data).toMatchObject({ outcomeKnown: false, error: { code: 'transport_lost' } });
    const execs = await env.sut.db.pool.query<{ state: string }>('SELECT state FROM sandbox.execs WHERE run_id = $1', [runId]);
    expect(execs.rows).toEqual([{ state: 'lost' }]);
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 0, { timeoutMs: 15_000, what: 'the lost command to be killed through a new connection' });
  });
});
