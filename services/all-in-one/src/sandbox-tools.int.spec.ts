import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { eventually, hostProcesses } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

function worker(name: string, tools: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Run the commands.
tools: ${tools}
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';


/** Workers act on a machine through the sandbox service: real bubblewrap behind run_command. */
/** A page with a button, a field, and an image from an origin no grant names. */
function site(elsewhere: () => string): Server {
  return createServer((request, response) => {
    if (request.url === '/page') {
      response.writeHead(200, { 'content-type': 'text/html' });
      return void response.end(`<html><head><title>Release board</title></head><body><h1>Release 4.2 is green</h1><img src="${elsewhere()}/pixel.png"></body></html>`);
    }
    response.writeHead(404).end();
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('run_command and browser through the sandbox', () => {
  let env: ExecutionApp;
  let board: Server;
  let boardOrigin: string;
  let other: Server;
  let otherOrigin: string;
  let otherRequests = 0;

  beforeAll(async () => {
    other = createServer((_request, response) => {
      otherRequests += 1;
      response.end();
    });
    otherOrigin = await listen(other);
    board = site(() => otherOrigin);
    boardOrigin = await listen(board);
    env = await startExecutionApp({ allowPrivate: [new URL(boardOrigin).host, new URL(otherOrigin).host] });
  });
  afterAll(async () => {
    await env?.close();
    board?.close();
    other?.close();
  });

  const toolResults = async (runId: string) => (await env.events(runId)).filter((event) => event.type === 'run.tool_result').map((event) => event.data);

  it('runs node --version and a failing command for a scripted worker; the timeline has both exit codes and outputs', async () => {
    env.writeScript(
      'commands',
      `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "node --version" } }]\n  - toolCalls: [{ name: run_command, arguments: { command: "ls no-such-file" } }]\n  - toolCalls: [${FINISH}]\n`,
    );
    const deploymentId = await env.deploy(worker('commands', '[{ tool: run_command, verbs: [exec], resources: ["node --version", "ls *"], approval: never }]'));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000)).toBe('succeeded');

    const [version, failing] = await toolResults(runId);
    expect(version).toMatchObject({ tool: 'run_command', ok: true, output: { exitCode: 0, state: 'exited', stdout: `${process.version}\n`, stderr: '' } });
    expect(failing).toMatchObject({ tool: 'run_command', ok: false, output: { exitCode: 2, state: 'exited', stdout: '', error: { code: 'command_failed' } } });
    expect(String((failing!['output'] as { stderr: string }).stderr)).toMatch(/no-such-file/);

    // The sandbox's own record of each, under the run's effect key.
    const execs = await env.sut.db.pool.query<{ exec_id: string; state: string; exit_code: number; driver: string }>('SELECT exec_id, state, exit_code, driver FROM sandbox.execs WHERE run_id = $1 ORDER BY started_at', [runId]);
    expect(execs.rows.map((row) => [row.state, row.exit_code, row.driver])).toEqual([
      ['exited', 0, 'bubblewrap'],
      ['exited', 2, 'bubblewrap'],
    ]);
    expect(execs.rows[0]!.exec_id).toMatch(new RegExp(`^${runId}:`));

    // Both outputs are in the run's log as a person reads it.
    const logs = await env.sut.request<{ items: Array<{ type: string; data: Record<string, unknown> }> }>('GET', `/api/v1/workspaces/${env.ws}/runs/${runId}/events`, { headers: bearer(env.owner) });
    expect(logs.status).toBe(200);
    expect(JSON.stringify(logs.body)).toContain(process.version);
  });

  it('kills the process tree of a 60 s command within 2 s of a stop, and the run ends cancelled', async () => {
    const marker = '60.8181';
    env.writeScript('long', `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "sleep ${marker}" } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('long', '[{ tool: run_command, verbs: [exec], resources: ["sleep *"], approval: never }]'));
    const runId = await env.startRun(deploymentId);
    await eventually(() => hostProcesses(`sleep ${marker}`).length > 0, { timeoutMs: 30_000, what: 'the command to be running' });

    const stoppedAt = Date.now();
    expect((await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/runs/${runId}/stop`, { body: {}, headers: bearer(env.owner) })).status).toBe(200);
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 0, { timeoutMs: 5_000, intervalMs: 25, what: 'the process tree to be gone' });
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 30_000)).toBe('cancelled');
    const exec = await env.sut.db.pool.query<{ state: string; limit_name: string }>('SELECT state, limit_name FROM sandbox.execs WHERE run_id = $1', [runId]);
    expect(exec.rows).toEqual([{ state: 'killed', limit_name: 'cancelled' }]);
  });

  it('refuses shell metacharacters before anything runs: the model gets a correction, no exec is recorded', async () => {
    env.writeScript('meta', `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "ls; cat /etc/passwd" } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('meta', '[{ tool: run_command, verbs: [exec], resources: ["ls *"], approval: never }]'));
    const runId = await env.startRun(deploymentId);
    await env.waitForState(runId, TERMINAL_RUN_STATES, 30_000);
    expect(JSON.stringify(await env.events(runId))).toContain('shell metacharacters');
    expect((await env.sut.db.pool.query('SELECT 1 FROM sandbox.execs WHERE run_id = $1', [runId])).rowCount).toBe(0);
  });

  it('browses a page for a scripted worker: navigate, read and screenshot, with an ungranted subresource blocked and the screenshot verifiable', async () => {
    const page = `${boardOrigin}/page`;
    env.writeScript(
      'browse',
      `turns:\n  - toolCalls: [{ name: browser, arguments: { action: navigate, url: "${page}" } }]\n  - toolCalls: [{ name: browser, arguments: { action: read, url: "${page}" } }]\n  - toolCalls: [{ name: browser, arguments: { action: screenshot, url: "${page}" } }]\n  - toolCalls: [${FINISH}]\n`,
    );
    const deploymentId = await env.deploy(worker('browse', `[{ tool: browser, verbs: [navigate, read, screenshot], resources: ["${boardOrigin}/*"], approval: never }]`));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000)).toBe('succeeded');

    const [navigated, read, shot] = await toolResults(runId);
    expect(navigated).toMatchObject({ tool: 'browser', ok: true, output: { url: page, title: 'Release board', status: 200, blocked: [{ url: `${otherOrigin}/pixel.png`, resourceType: 'image' }] } });
    expect(read).toMatchObject({ ok: true, output: { text: expect.stringContaining('Release 4.2 is green') } });
    expect(otherRequests).toBe(0);

    const screenshot = (shot!['output'] as { screenshot: { $payload: { digest: string }; sha256: string } }).screenshot;
    const stored = await env.sut.request<{ base64: string }>('GET', `/api/v1/workspaces/${env.ws}/payloads/${screenshot.$payload.digest}`, { headers: bearer(env.owner) });
    expect(stored.status).toBe(200);
    const png = Buffer.from(stored.body.base64, 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(createHash('sha256').update(png).digest('hex')).toBe(screenshot.sha256);
  });
});
