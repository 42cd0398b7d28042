import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';
import { Tracker } from './testing/mcp-tracker.testkit';

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';

function worker(name: string, url: string, tools: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Keep the tracker tidy.
mcp:
  - { name: tracker, transport: http, url: "${url}" }
tools: ${tools}
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

/** Workers call tools of a real MCP server (the official SDK on both sides) under grants, pins, receipts and approvals. */
describe('MCP tools in a run', () => {
  const tracker = new Tracker();
  let env: ExecutionApp;

  beforeAll(async () => {
    await tracker.start();
    env = await startExecutionApp({ allowPrivate: [tracker.host] });
  });
  afterAll(async () => {
    await env?.close();
    await tracker.close();
  });

  const decisions = async (runId: string) => (await env.events(runId)).filter((event) => event.type === 'run.tool_decided').map((event) => [event.data['resource'], event.data['decision'], (event.data['reason'] as { code: string }).code]);
  const results = async (runId: string) => (await env.events(runId)).filter((event) => event.type === 'run.tool_result').map((event) => event.data);

  it('pins the server\'s tools in the version, calls a granted one and finishes; an ungranted one is denied on the record', async () => {
    env.writeScript(
      'granted',
      `turns:\n  - toolCalls: [{ name: tracker__create_issue, arguments: { title: "Broken build" } }]\n  - toolCalls: [{ name: tracker__list_issues, arguments: {} }]\n  - toolCalls: [{ name: tracker__delete_issue, arguments: { number: 1 } }]\n  - toolCalls: [${FINISH}]\n`,
    );
    const deploymentId = await env.deploy(worker('granted', tracker.url, '[{ tool: "mcp:tracker/create_issue", approval: never }, { tool: "mcp:tracker/list_issues", approval: never }]'));
    const versions = await env.sut.db.pool.query<{ definition: { mcp: Array<{ tools: Array<{ name: string; digest: string }> }> } }>('SELECT definition FROM intake.versions WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 1', [env.ws]);
    expect(versions.rows[0]!.definition.mcp[0]!.tools.map((tool) => tool.name).sort()).toEqual(['create_issue', 'delete_issue', 'list_issues']);

    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 25_000)).toBe('succeeded');
    expect(tracker.issues).toEqual(['Broken build']);
    expect(await decisions(runId)).toEqual([
      ['tracker/create_issue', 'allow', 'granted'],
      ['tracker/list_issues', 'allow', 'granted'],
      ['tracker/delete_issue', 'deny', expect.stringMatching(/not_granted/)],
    ]);
    const [created, listed] = await results(runId);
    expect(created).toMatchObject({ tool: 'mcp', ok: true, output: { preview: 'created #1' } });
    expect(listed).toMatchObject({ ok: true, output: { preview: '["Broken build"]' } });
    // Mutating on an untrusted server: between effect receipts, counted per tool.
    const types = (await env.events(runId)).map((event) => event.type);
    expect(types.filter((type) => type === 'effect.completed')).toHaveLength(2);
  });

  it('cannot call a tool the server added after the version was pinned, even under mcp:tracker/*', async () => {
    env.writeScript('added', `turns:\n  - toolCalls: [{ name: tracker__close_issue, arguments: { number: 1 } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('added', tracker.url, '[{ tool: "mcp:tracker/*", approval: never }]'));
    tracker.withCloseTool = true;
    try {
      const runId = await env.startRun(deploymentId);
      await env.waitForState(runId, TERMINAL_RUN_STATES, 25_000);
      const events = JSON.stringify(await env.events(runId));
      expect(events).toContain("not a tool this run's version pinned");
      expect((await env.events(runId)).some((event) => event.type === 'run.tool_decided')).toBe(false);
    } finally {
      tracker.withCloseTool = false;
    }
  });

  it('waits for a person before a destructive tool, whatever the grant says', async () => {
    env.writeScript('destructive', `turns:\n  - toolCalls: [{ name: tracker__delete_issue, arguments: { number: 1 } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('destructive', tracker.url, '[{ tool: "mcp:tracker/delete_issue", approval: never }]'));
    const runId = await env.startRun(deploymentId);
    await eventually(async () => (await decisions(runId)).some(([, decision]) => decision === 'approval_required'), { timeoutMs: 25_000, what: 'the destructive call to wait for approval' });
    expect(tracker.issues).toEqual(['Broken build']);
    expect((await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/runs/${runId}/stop`, { body: {}, headers: bearer(env.owner) })).status).toBe(200);
  });
});
