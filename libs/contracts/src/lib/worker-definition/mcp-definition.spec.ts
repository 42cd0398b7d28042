import { mcpToolDigest, type PinnedMcpTool } from '../sandbox/mcp.v1';
import { canonicalDefinition, credentialsOf } from './canonical';
import { DefinitionError } from './errors';
import { narrowDefinition } from './overrides';
import { parseWorkerDefinition, validateStoredDefinition, validateWorkerDefinition } from './parse';
import { normaliseResource, resourceCovers } from './resources';

const base = {
  apiVersion: 'packetagent/v1',
  kind: 'Worker',
  name: 'issue-triage',
  model: { preset: 'fast' },
  instructions: 'Triage new issues.',
  exit: { finish: { criteria: ['the issue is labelled'] } },
};

const servers = [
  { name: 'tracker', transport: 'http', url: 'https://mcp.example.com/mcp', credential: 'tracker_token' },
  { name: 'local', transport: 'stdio', command: 'notes-mcp' },
];

function pinned(name: string, annotations: PinnedMcpTool['annotations'] = {}): PinnedMcpTool {
  const tool = { name, description: `${name} tool`, inputSchema: { type: 'object' }, annotations };
  return { ...tool, digest: mcpToolDigest(tool) };
}

function issuesOf(run: () => unknown): Array<{ path: string; message: string }> {
  try {
    run();
  } catch (error) {
    if (error instanceof DefinitionError) return error.issues.map(({ path, message }) => ({ path, message }));
    throw error;
  }
  throw new Error('expected a DefinitionError');
}

describe('MCP servers and grants in a worker definition', () => {
  it('expands mcp:<server>/<tool> into an mcp grant of that resource, several of them with their own approvals', () => {
    const sut = validateWorkerDefinition({
      ...base,
      mcp: servers,
      tools: [
        { tool: 'mcp:tracker/create_issue', approval: 'always', credentials: ['tracker_token'] },
        { tool: 'mcp:tracker/*', approval: 'never' },
        { tool: 'mcp', resources: ['mcp:local/search', 'local/read'], approval: 'first_use' },
      ],
    });

    expect(sut.tools).toEqual([
      { tool: 'mcp', verbs: ['call'], resources: ['tracker/create_issue'], approval: 'always', credentials: ['tracker_token'] },
      { tool: 'mcp', verbs: ['call'], resources: ['tracker/*'], approval: 'never', credentials: [] },
      { tool: 'mcp', verbs: ['call'], resources: ['local/search', 'local/read'], approval: 'first_use', credentials: [] },
    ]);
    expect(sut.mcp).toEqual([
      { name: 'tracker', transport: 'http', url: 'https://mcp.example.com/mcp', credential: 'tracker_token', trusted: false, timeoutMs: 60_000, maxResultBytes: 4 * 1024 * 1024 },
      { name: 'local', transport: 'stdio', command: 'notes-mcp', args: [], trusted: false, timeoutMs: 60_000, maxResultBytes: 4 * 1024 * 1024 },
    ]);
  });

  it('counts an http server\'s credential among the credentials the definition refers to', () => {
    expect(credentialsOf(validateWorkerDefinition({ ...base, mcp: servers }))).toEqual(['tracker_token']);
  });

  it("counts an OAuth server's connection among the credentials, and refuses a server with both a credential and oauth", () => {
    const oauth = { name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp', oauth: { credential: 'docs_oauth', scopes: ['read'] } };
    const parsed = validateWorkerDefinition({ ...base, mcp: [oauth] });
    expect(parsed.mcp?.[0]).toMatchObject({ oauth: { credential: 'docs_oauth', scopes: ['read'] } });
    expect(credentialsOf(parsed)).toEqual(['docs_oauth']);
    expect(issuesOf(() => validateWorkerDefinition({ ...base, mcp: [{ ...oauth, credential: 'docs_token' }] }))).toEqual([
      { path: 'mcp[0].oauth', message: 'a server takes either a static credential or oauth, not both' },
    ]);
    expect(issuesOf(() => validateWorkerDefinition({ ...base, mcp: [{ ...oauth, oauth: { credential: 'docs_oauth', scopes: ['a b'] } }] }))[0]?.path).toBe('mcp[0].oauth.scopes[0]');
  });

  it('requires the grants of a server on a computer to name that computer, and refuses computers for one in the sandbox', () => {
    const onComputer = [{ name: 'builds', transport: 'stdio', command: 'builds-mcp', computer: 'build-box' }, ...servers];
    expect(validateWorkerDefinition({ ...base, mcp: onComputer, tools: [{ tool: 'mcp:builds/*', computers: ['build-box'] }] }).mcp?.[0]).toMatchObject({ computer: 'build-box' });
    expect(issuesOf(() => validateWorkerDefinition({ ...base, mcp: onComputer, tools: [{ tool: 'mcp:builds/*' }] }))).toEqual([
      { path: 'tools[0].tool', message: 'mcp:builds/*: the server "builds" runs on computer "build-box", so the grant must name it under computers' },
    ]);
    expect(issuesOf(() => validateWorkerDefinition({ ...base, mcp: onComputer, tools: [{ tool: 'mcp:local/*', computers: ['build-box'] }] }))).toEqual([
      { path: 'tools[0].computers', message: 'mcp:local/*: the server "local" runs in the sandbox, not on a computer' },
    ]);
  });

  it('refuses a grant for a server the definition does not declare, at the grant', () => {
    const issues = issuesOf(() => validateWorkerDefinition({ ...base, mcp: servers, tools: [{ tool: 'mcp:wiki/search' }] }));

    expect(issues).toEqual([{ path: 'tools[0].tool', message: 'mcp:wiki/search names the server "wiki", which the definition does not declare under mcp (declared: tracker, local)' }]);
  });

  it('refuses two mcp grants of the same resource but not a tool next to its server\'s "*"', () => {
    const issues = issuesOf(() =>
      validateWorkerDefinition({ ...base, mcp: servers, tools: [{ tool: 'mcp:tracker/*' }, { tool: 'mcp:tracker/search' }, { tool: 'mcp', resources: ['tracker/search'] }] }),
    );

    expect(issues).toEqual([{ path: 'tools[2].tool', message: 'duplicate grant for "mcp:tracker/search" (first at tools[1])' }]);
  });

  it('refuses malformed MCP tool ids and resources written beside an id', () => {
    const issues = issuesOf(() =>
      validateWorkerDefinition({ ...base, mcp: servers, tools: [{ tool: 'mcp:Tracker/x' }, { tool: 'mcp:tracker/x', resources: ['tracker/y'] }, { tool: 'mcp' }] }),
    );

    expect(issues).toEqual([
      { path: 'tools[0].tool', message: 'not an MCP tool id: expected "mcp:<server>/<tool>" or "mcp:<server>/*"' },
      { path: 'tools[1].resources', message: 'mcp:tracker/x names its resource: list resources only with tool "mcp"' },
      { path: 'tools[2].resources', message: 'required for mcp: list the MCP tools ("<server>/<tool>" or "<server>/*") it may use' },
    ]);
  });

  it('refuses tools written by a source, duplicate server names, unknown keys and more than 16 servers', () => {
    const issues = issuesOf(() =>
      validateWorkerDefinition({
        ...base,
        mcp: [{ ...servers[0], tools: [pinned('search')] }, { ...servers[1], oauth: {} }, { ...servers[1] }],
      }),
    );
    const tooMany = issuesOf(() => validateWorkerDefinition({ ...base, mcp: Array.from({ length: 17 }, (_, i) => ({ ...servers[1], name: `s${i}` })) }));

    expect(issues).toEqual([
      { path: 'mcp[0].tools', message: "written by the version, not the source: a server's tools are pinned from its answer when the version is created" },
      { path: 'mcp[1].oauth', message: 'unknown key' },
    ]);
    expect(tooMany.map((issue) => issue.path)).toEqual(['mcp']);
    expect(issuesOf(() => validateWorkerDefinition({ ...base, mcp: [servers[1], servers[1]] }))).toEqual([{ path: 'mcp[1].name', message: 'duplicate server "local" (first at mcp[0])' }]);
  });

  it('keeps the digest of a definition without servers whether mcp is absent or empty', () => {
    const without = parseWorkerDefinition(JSON.stringify(base), 'json');
    const empty = parseWorkerDefinition(JSON.stringify({ ...base, mcp: [] }), 'json');

    expect(Object.hasOwn(empty, 'mcp')).toBe(false);
    expect(canonicalDefinition(empty).digest).toBe(canonicalDefinition(without).digest);
  });

  it('accepts a stored version whose servers carry their pinned tools and refuses a grant of a tool not pinned', () => {
    const stored = { ...base, mcp: [{ ...servers[0], tools: [pinned('search'), pinned('delete_issue', { destructiveHint: true })] }], tools: [{ tool: 'mcp:tracker/search' }] };

    expect(validateStoredDefinition(stored).mcp![0]!.tools!.map((tool) => tool.name)).toEqual(['search', 'delete_issue']);
    expect(issuesOf(() => validateStoredDefinition({ ...stored, tools: [{ tool: 'mcp:tracker/close_issue' }, { tool: 'mcp:tracker/*' }] }))).toEqual([
      { path: 'tools[0].tool', message: 'mcp:tracker/close_issue: the server "tracker" does not list the tool "close_issue" (it lists: search, delete_issue)' },
    ]);
    expect(issuesOf(() => validateStoredDefinition({ ...base, mcp: [servers[0]] })).map((issue) => issue.path)).toEqual(['mcp[0].tools']);
  });
});

describe('MCP resources', () => {
  it('normalises the mcp: prefix away and refuses anything but <server>/<tool> or <server>/*', () => {
    expect(normaliseResource('mcp', 'mcp:tracker/search')).toEqual({ ok: true, value: 'tracker/search' });
    expect(normaliseResource('mcp', 'tracker/*')).toEqual({ ok: true, value: 'tracker/*' });
    for (const bad of ['tracker', 'tracker/', '*/search', 'tracker/se*', 'tracker/a/b', 'Tracker/x']) {
      expect(normaliseResource('mcp', bad).ok).toBe(false);
    }
  });

  it('covers a tool by itself or by its server\'s "*", never another server\'s', () => {
    expect(resourceCovers('mcp', 'tracker/*', 'tracker/search')).toBe(true);
    expect(resourceCovers('mcp', 'tracker/*', 'tracker/*')).toBe(true);
    expect(resourceCovers('mcp', 'tracker/search', 'tracker/search')).toBe(true);
    expect(resourceCovers('mcp', 'tracker/search', 'tracker/*')).toBe(false);
    expect(resourceCovers('mcp', 'tracker/search', 'tracker/list')).toBe(false);
    expect(resourceCovers('mcp', 'tracker/*', 'trackers/search')).toBe(false);
  });
});

describe('MCP grants in deployment overrides', () => {
  const version = validateWorkerDefinition({
    ...base,
    mcp: servers,
    tools: [{ tool: 'mcp:tracker/*', approval: 'never' }, { tool: 'mcp:tracker/create_issue', approval: 'first_use' }],
  });

  it('narrows the mcp grant naming the same resources and keeps the others', () => {
    const sut = narrowDefinition(version, { tools: [{ tool: 'mcp:tracker/create_issue', approval: 'always' }] });

    expect(sut.tools.map((grant) => [grant.resources, grant.approval])).toEqual([
      [['tracker/*'], 'never'],
      [['tracker/create_issue'], 'always'],
    ]);
    expect(sut.mcp).toEqual(version.mcp);
  });

  it('refuses an override naming resources no version grant names exactly', () => {
    expect(() => narrowDefinition(version, { tools: [{ tool: 'mcp:tracker/search' }] })).toThrow(
      expect.objectContaining({
        issues: [{ path: 'overrides.tools[0].tool', message: "no mcp grant of the version names exactly mcp:tracker/search: an override narrows the grant with the same resources (the version's: [mcp:tracker/*], [mcp:tracker/create_issue])" }],
      }),
    );
    expect(() => narrowDefinition(version, { tools: [{ tool: 'mcp:tracker/*', approval: 'first_use' }, { tool: 'mcp:tracker/create_issue', approval: 'never' }] })).toThrow(
      expect.objectContaining({ issues: [{ path: 'overrides.tools[1].approval', message: '"never" is weaker than the version\'s "first_use"' }] }),
    );
  });
});

describe('action budgets of MCP tools', () => {
  const base = (actions: Record<string, unknown>) => `apiVersion: packetagent/v1
kind: Worker
name: tracker-bot
model: { provider: scripted, model: tracker }
instructions: File issues.
mcp:
  - { name: tracker, transport: http, url: "https://tracker.example.com/mcp" }
tools:
  - { tool: "mcp:tracker/create_issue", approval: never }
budgets: { actions: ${JSON.stringify(actions)} }
exit: { finish: { criteria: [done] } }
triggers: [{ manual: {} }]
`;

  it('counts an MCP tool by its id, and refuses the bare mcp tool, which no call is counted as', () => {
    expect(parseWorkerDefinition(base({ 'mcp:tracker/create_issue': { perDay: 5 } }), 'yaml').budgets.actions).toEqual({ 'mcp:tracker/create_issue': { perDay: 5 } });
    expect(() => parseWorkerDefinition(base({ mcp: { perDay: 5 } }), 'yaml')).toThrow(/counted per tool/);
  });
});
