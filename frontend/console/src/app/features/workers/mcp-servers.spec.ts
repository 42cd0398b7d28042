import { annotationBadges, mcpServersOf, trustNote } from './mcp-servers';

const DIGEST = (char: string) => char.repeat(64);

// A definition as the API stores it: grants in normal form, each server's tools pinned.
const definition = {
  apiVersion: 'packetagent/v1',
  kind: 'Worker',
  name: 'issue-triage',
  mcp: [
    {
      name: 'tracker',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      credential: 'tracker_token',
      trusted: false,
      timeoutMs: 60_000,
      maxResultBytes: 4_194_304,
      tools: [
        { name: 'list_issues', description: 'Lists the open issues.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true, title: 'List issues' }, digest: DIGEST('a') },
        { name: 'delete_issue', description: 'Deletes an issue.', inputSchema: { type: 'object' }, annotations: { destructiveHint: true, openWorldHint: true }, digest: DIGEST('b') },
      ],
    },
    { name: 'notes', transport: 'stdio', command: 'notes-mcp', args: ['--dir', '/srv/my notes'], trusted: true, timeoutMs: 30_000, maxResultBytes: 1_048_576, tools: [
      { name: 'search', description: 'x'.repeat(400), inputSchema: { type: 'object' }, annotations: { idempotentHint: true, readOnlyHint: false }, digest: DIGEST('c') },
      { name: 'write_note', description: '', inputSchema: { type: 'object' }, annotations: {}, digest: DIGEST('d') },
    ] },
  ],
  tools: [
    { tool: 'mcp', verbs: ['call'], resources: ['tracker/*'], approval: 'never', credentials: ['tracker_token'] },
    { tool: 'mcp', verbs: ['call'], resources: ['tracker/delete_issue'], approval: 'always', credentials: [] },
    { tool: 'mcp', verbs: ['call'], resources: ['notes/search'], approval: 'first_use', credentials: [] },
    { tool: 'read_file', verbs: ['read'], resources: ['notes/write_note'], approval: 'never', credentials: [] },
  ],
};

describe(mcpServersOf.name, () => {
  it("shows each server's transport, target, trust and credential, in the order the version declares them", () => {
    const sut = mcpServersOf(definition);

    expect(sut.map(({ tools: _tools, ...server }) => server)).toEqual([
      { name: 'tracker', transport: 'http', target: 'https://mcp.example.com/mcp', trusted: false, credential: 'tracker_token', oauth: null },
      { name: 'notes', transport: 'stdio', target: 'notes-mcp --dir "/srv/my notes"', trusted: true, credential: null, oauth: null },
    ]);
  });

  it("reads an http server's oauth: its credential, scopes and client; a stdio server or a malformed oauth has none", () => {
    const withOAuth = {
      mcp: [
        { name: 'wiki', transport: 'http', url: 'https://wiki.example.com/mcp', oauth: { credential: 'wiki_oauth', scopes: ['read', 'write'], clientId: 'packetagent-prod' }, tools: [] },
        { name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp', oauth: { credential: 'docs_oauth' }, tools: [] },
        { name: 'odd', transport: 'stdio', command: 'odd-mcp', oauth: { credential: 'odd' } },
        { name: 'broken', transport: 'http', url: 'https://broken.example.com/mcp', oauth: { scopes: [] } },
      ],
    };

    expect(mcpServersOf(withOAuth).map((server) => [server.name, server.oauth])).toEqual([
      ['wiki', { credential: 'wiki_oauth', scopes: ['read', 'write'], clientId: 'packetagent-prod' }],
      ['docs', { credential: 'docs_oauth', scopes: [], clientId: null }],
      ['odd', null],
      ['broken', null],
    ]);
  });

  it('names the grant deciding each tool: the one naming it before its server\'s "*", none for a tool no mcp grant covers', () => {
    const grants = mcpServersOf(definition).flatMap((server) => server.tools.map((tool) => [`${server.name}/${tool.name}`, tool.grant]));

    expect(grants).toEqual([
      ['tracker/list_issues', 'mcp:tracker/*'],
      ['tracker/delete_issue', 'mcp:tracker/delete_issue'],
      ['notes/search', 'mcp:notes/search'],
      ['notes/write_note', null],
    ]);
  });

  it('shows the digest prefix, the title, and the description cut to 300 characters', () => {
    const [tracker, notes] = mcpServersOf(definition);

    expect(tracker!.tools[0]).toMatchObject({ name: 'list_issues', title: 'List issues', description: 'Lists the open issues.', digest: DIGEST('a'), digestPrefix: 'aaaaaaaaaaaa' });
    expect(notes!.tools[0]!.description).toBe(`${'x'.repeat(299)}…`);
    expect(notes!.tools[1]!.title).toBeNull();
  });

  it('does not count a grant without the verb call, and shows nothing for a definition without servers or one it cannot read', () => {
    const withoutCall = { ...definition, tools: [{ tool: 'mcp', verbs: [], resources: ['tracker/*'] }] };

    expect(mcpServersOf(withoutCall)[0]!.tools.map((tool) => tool.grant)).toEqual([null, null]);
    expect(mcpServersOf({ apiVersion: 'packetagent/v1', tools: [] })).toEqual([]);
    expect(mcpServersOf(null)).toEqual([]);
    expect(mcpServersOf({ mcp: [{ name: 'bare', transport: 'stdio', command: 'bare-mcp' }] })).toEqual([{ name: 'bare', transport: 'stdio', target: 'bare-mcp', trusted: false, credential: null, oauth: null, tools: [] }]);
  });
});

describe(annotationBadges.name, () => {
  it('shows the hints a server set to true, destructive as bad, and none for hints set false or absent', () => {
    expect(annotationBadges({ readOnlyHint: true, destructiveHint: true, idempotentHint: true, openWorldHint: true })).toEqual([
      { text: 'read-only', tone: 'ok' },
      { text: 'destructive', tone: 'bad' },
      { text: 'idempotent', tone: 'neutral' },
      { text: 'open world', tone: 'neutral' },
    ]);
    expect(annotationBadges({ readOnlyHint: false, title: 'x' })).toEqual([]);
    expect(annotationBadges(undefined)).toEqual([]);
  });
});

describe(trustNote.name, () => {
  it('says an untrusted server\'s hints do not loosen policy, and what a trusted one\'s do', () => {
    expect(trustNote({ trusted: false })).toBe('Its hints do not loosen policy: every call is treated as mutating and not idempotent.');
    expect(trustNote({ trusted: true })).toBe('Its read-only and idempotent hints loosen what policy assumes of a call (not mutating, repeatable after a crash).');
  });
});
