import { mcpToolDigest, validateStoredDefinition, type PinnedMcpTool } from '@packetagent/contracts';
import { admit, authorize, deployDefinition, deployPinned, sha, startPolicy, type PolicyHarness } from '../testing/policy.testkit';

function tool(name: string, annotations: PinnedMcpTool['annotations'] = {}): PinnedMcpTool {
  const listed = { name, description: `${name} things`, inputSchema: { type: 'object' }, annotations };
  return { ...listed, digest: mcpToolDigest(listed) };
}

// A stored version's effective definition: its servers carry the tools pinned at version creation.
const effective = validateStoredDefinition({
  apiVersion: 'packetagent/v1',
  kind: 'Worker',
  name: 'issue-triage',
  model: { preset: 'fast' },
  instructions: 'Triage new issues.',
  exit: { finish: { criteria: ['the issue is labelled'] } },
  mcp: [
    { name: 'tracker', transport: 'http', url: 'https://mcp.example.com/mcp', tools: [tool('search', { readOnlyHint: true }), tool('create_issue'), tool('delete_issue', { destructiveHint: true })] },
    { name: 'wiki', transport: 'stdio', command: 'wiki-mcp', trusted: true, tools: [tool('page'), tool('purge', { readOnlyHint: true, destructiveHint: true })] },
  ],
  tools: [
    { tool: 'mcp:tracker/*', approval: 'never' },
    { tool: 'mcp:tracker/create_issue', approval: 'first_use' },
    { tool: 'mcp:wiki/*', approval: 'never' },
    { tool: 'files', verbs: ['read'], resources: ['reports/**'], approval: 'never' },
  ],
});

const mcpCall = (resource: string, verb = 'call') => ({ tool: 'mcp', verb, resource });

describe('authorizing MCP calls', () => {
  let h: PolicyHarness;

  beforeAll(async () => {
    h = await startPolicy();
    await deployDefinition(h, 'd-mcp', effective);
    await admit(h, 'r-mcp', 'd-mcp');
    // Its effective definition was never kept: policy cannot know what the version pinned.
    await deployPinned(h, 'd-unread', sha('never kept'), effective.tools as never);
    await admit(h, 'r-unread', 'd-unread');
  });
  afterAll(() => h?.close());

  it.each([
    ['a pinned tool under its server\'s "*"', mcpCall('tracker/search'), 'allow', 'granted'],
    ['a tool by its own grant before the "*"', mcpCall('tracker/create_issue'), 'approval_required', 'first_use'],
    ['a destructive tool under a grant without approval', mcpCall('tracker/delete_issue'), 'approval_required', 'approval_required'],
    ['a destructive tool of a trusted server that also says read-only', mcpCall('wiki/purge'), 'approval_required', 'approval_required'],
    ['a tool of a trusted server', mcpCall('wiki/page'), 'allow', 'granted'],
    ['a tool the server added after the version', mcpCall('tracker/close_everything'), 'deny', 'resource_not_granted'],
    ['a server the definition does not declare', mcpCall('billing/refund'), 'deny', 'resource_not_granted'],
    ['a malformed tool id', mcpCall('tracker'), 'deny', 'resource_invalid'],
    ['another verb', mcpCall('tracker/search', 'list'), 'deny', 'verb_not_granted'],
  ])('decides %s', async (_label, call, decision, code) => {
    const sut = await authorize(h, { runId: 'r-mcp', ...call });

    expect({ decision: sut.decision, code: sut.reason.code }).toEqual({ decision, code });
  });

  it('keeps the pinned tools next to the compiled grants, and the other tools as they were', async () => {
    const { rows } = await h.db.pool.query<{ grants: Array<{ tool: string; resources: string[]; mcpTools: unknown }> }>(
      `SELECT grants FROM policy.deployments WHERE deployment_id = 'd-mcp'`,
    );

    expect(rows[0]!.grants.map((grant) => [grant.tool, grant.resources, grant.mcpTools])).toEqual([
      ['files', ['reports/**'], null],
      ['mcp', ['tracker/*'], [{ resource: 'tracker/create_issue', destructive: false }, { resource: 'tracker/delete_issue', destructive: true }, { resource: 'tracker/search', destructive: false }]],
      ['mcp', ['tracker/create_issue'], [{ resource: 'tracker/create_issue', destructive: false }]],
      ['mcp', ['wiki/*'], [{ resource: 'wiki/page', destructive: false }, { resource: 'wiki/purge', destructive: true }]],
    ]);
  });

  it('allows no MCP call when the effective definition cannot be read, and other tools as granted', async () => {
    const mcp = await authorize(h, { runId: 'r-unread', ...mcpCall('tracker/search') });
    const files = await authorize(h, { runId: 'r-unread', tool: 'files', verb: 'read', resource: 'reports/a.md' });

    expect([mcp.decision, mcp.reason.code]).toEqual(['deny', 'resource_not_granted']);
    expect([files.decision, files.reason.code]).toEqual(['allow', 'granted']);
  });
});
