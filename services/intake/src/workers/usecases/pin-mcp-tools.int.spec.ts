import type { Subscription } from '@nats-io/transport-node';
import { topology } from '@packetagent/bus';
import { IntakeCommands, McpCommands, mcpToolDigest, type McpListResult, type PinnedMcpTool } from '@packetagent/contracts';
import { definition, startIntake, type IntakeHarness } from '../../testing/intake.testkit';

function tool(name: string, description = `${name} things`): PinnedMcpTool {
  const listed = { name, description, inputSchema: { type: 'object', properties: { query: { type: 'string' } } }, annotations: { readOnlyHint: true } };
  return { ...listed, digest: mcpToolDigest(listed) };
}

const tracker = { name: 'tracker', transport: 'http', url: 'https://mcp.example.com/mcp' };

describe('pinning MCP tools at version creation', () => {
  let h: IntakeHarness;
  let responder: Subscription;
  const asked: Array<{ server: { name: string }; bearer?: string }> = [];
  /** What the stand-in answers per server name: a tool list, or an error reply of the sandbox's shape. */
  const answers = new Map<string, { tools: PinnedMcpTool[] } | { error: { code: string; message: string } } | { malformed: true }>();

  beforeAll(async () => {
    h = await startIntake();
    // Stands in for the sandbox service, which serves sandbox.mcp.list in the real system.
    responder = h.testBus.nc.subscribe(`${topology(h.testBus.prefix).commandSubjectRoot}.${McpCommands.list.name}`, {
      callback: (_error, message) => {
        const request = message.json<{ server: { name: string }; bearer?: string }>();
        asked.push(request);
        const answer = answers.get(request.server.name);
        if (!answer) return;
        if ('error' in answer) {
          message.respond(JSON.stringify({ ok: false, error: { ...answer.error, retryable: false } }));
          return;
        }
        const result: McpListResult | { tools: string } =
          'malformed' in answer ? { tools: 'not a list' } : { server: { name: request.server.name, version: '1.0.0' }, protocolVersion: '2025-06-18', tools: answer.tools };
        message.respond(JSON.stringify({ ok: true, result }));
      },
    });
  });
  afterAll(async () => {
    responder.unsubscribe();
    await h.close();
  });
  beforeEach(() => {
    asked.length = 0;
  });

  async function worker() {
    const name = `w-${Math.random().toString(36).slice(2, 8)}`;
    const { id } = await h.bus.request(IntakeCommands.createWorker, { workspaceId: h.workspaceId, actor: h.actor, name });
    return { name, id };
  }

  // A caller waits for the slowest server's listing: its timeout plus the margin.
  const createVersion = (workerId: string, source: string) =>
    h.bus.request(IntakeCommands.createVersion, { workspaceId: h.workspaceId, actor: h.actor, workerId, source, format: 'json' }, { timeoutMs: 10_000 });
  const versionsOf = async (workerId: string) => (await h.bus.request(IntakeCommands.listVersions, { workspaceId: h.workspaceId, workerId })).items;

  it('pins the tools the server lists into the stored definition and its digest, asking without a bearer', async () => {
    answers.set('tracker', { tools: [tool('search'), tool('create_issue')] });
    const { name, id } = await worker();
    const source = definition({ name, mcp: [tracker], tools: [{ tool: 'mcp:tracker/search', approval: 'never' }, { tool: 'mcp:tracker/*' }] });

    const first = await createVersion(id, source);
    const again = await createVersion(id, source);
    answers.set('tracker', { tools: [tool('search', 'searches differently'), tool('create_issue')] });
    const changed = await createVersion(id, source);
    const stored = await h.bus.request(IntakeCommands.getVersion, { workspaceId: h.workspaceId, workerId: id, version: first.version });
    const deployment = await h.bus.request(IntakeCommands.createDeployment, { workspaceId: h.workspaceId, actor: h.actor, workerId: id, version: first.version, overrides: { tools: [{ tool: 'mcp:tracker/*', approval: 'always' }] } });

    expect(asked.map((request) => [request.server.name, request.bearer])).toEqual([['tracker', undefined], ['tracker', undefined], ['tracker', undefined]]);
    expect(deployment).toMatchObject({ version: first.version, digest: first.digest });
    expect(again).toEqual({ version: first.version, digest: first.digest, created: false });
    expect(changed).toMatchObject({ version: first.version + 1, created: true });
    expect(changed.digest).not.toBe(first.digest);
    expect((stored.definition as { mcp: Array<{ tools: PinnedMcpTool[] }> }).mcp[0]!.tools).toEqual([tool('search'), tool('create_issue')]);
    expect((stored.definition as { tools: unknown[] }).tools).toEqual([
      { tool: 'mcp', verbs: ['call'], resources: ['tracker/search'], approval: 'never', credentials: [] },
      { tool: 'mcp', verbs: ['call'], resources: ['tracker/*'], approval: 'always', credentials: [] },
    ]);
  });

  it('refuses a grant of a tool the server does not list, at the grant, and writes nothing', async () => {
    answers.set('tracker', { tools: [tool('search')] });
    const { name, id } = await worker();

    const refused = createVersion(id, definition({ name, mcp: [tracker], tools: [{ tool: 'mcp:tracker/delete_everything' }] }));

    await expect(refused).rejects.toMatchObject({
      code: 'invalid_definition',
      issues: [{ path: 'tools[0].tool', message: 'mcp:tracker/delete_everything: the server "tracker" does not list the tool "delete_everything" (it lists: search)' }],
    });
    expect(await versionsOf(id)).toEqual([]);
  });

  it('refuses the version naming each server that could not be listed, and says a credential is not used at pinning yet', async () => {
    answers.set('tracker', { tools: [tool('search')] });
    answers.set('wiki', { error: { code: 'mcp_unavailable', message: 'the server answered 401 Unauthorized' } });
    answers.set('notes', { malformed: true });
    const { name, id } = await worker();
    const mcp = [tracker, { name: 'wiki', transport: 'http', url: 'https://wiki.example.com/mcp', credential: 'wiki_token' }, { name: 'notes', transport: 'stdio', command: 'notes-mcp' }];

    const refused = createVersion(id, definition({ name, mcp }));

    await expect(refused).rejects.toMatchObject({
      code: 'mcp_tools_not_pinned',
      issues: [
        {
          path: 'mcp[1]',
          message:
            'MCP server "wiki" could not be listed (mcp_unavailable): the server answered 401 Unauthorized; it was asked without its credential "wiki_token", which cannot be used when a version is created yet',
        },
        { path: 'mcp[2]', message: expect.stringMatching(/^MCP server "notes" answered a tool list that cannot be read: /) },
      ],
    });
    expect(await versionsOf(id)).toEqual([]);
  });

  it('refuses the version when the sandbox service does not list within the server timeout and the margin', async () => {
    const { name, id } = await worker();

    const refused = createVersion(id, definition({ name, mcp: [{ name: 'silent', transport: 'stdio', command: 'silent-mcp', timeoutMs: 100 }] }));

    await expect(refused).rejects.toMatchObject({ code: 'mcp_tools_not_pinned', issues: [{ path: 'mcp[0]', message: 'MCP server "silent" did not list its tools within 5100 ms' }] });
    expect(await versionsOf(id)).toEqual([]);
  }, 15_000);

  it('asks nothing for a definition without MCP servers', async () => {
    const { name, id } = await worker();

    await createVersion(id, definition({ name }));

    expect(asked).toEqual([]);
  });
});
