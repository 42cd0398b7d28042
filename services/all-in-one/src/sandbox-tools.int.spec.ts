import { execFileSync } from 'node:child_process';
import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
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

function hostProcesses(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

/** Workers act on a machine through the sandbox service: real bubblewrap behind run_command. */
describe('run_command through the sandbox', () => {
  let env: ExecutionApp;

  beforeAll(async () => {
    env = await startExecutionApp();
  });
  afterAll(() => env?.close());

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
});
