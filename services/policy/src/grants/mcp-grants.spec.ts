import { compileGrants, grantsDigest } from './compile-grants';
import { checkCall, type Call } from './evaluate-call';
import type { McpServerPins } from './mcp-grants';

const digest = 'e'.repeat(64);

const servers: McpServerPins[] = [
  {
    name: 'tracker',
    tools: [
      { name: 'search', annotations: { readOnlyHint: true } },
      { name: 'create_issue', annotations: {} },
      { name: 'delete_issue', annotations: { destructiveHint: true } },
    ],
  },
  { name: 'wiki', tools: [{ name: 'page', annotations: { destructiveHint: false } }] },
];

const grants = [
  { tool: 'mcp', verbs: ['call'], resources: ['tracker/*'], approval: 'never', credentials: [] },
  { tool: 'mcp', verbs: ['call'], resources: ['tracker/create_issue'], approval: 'always', credentials: ['tracker_token'] },
  { tool: 'mcp', verbs: ['call'], resources: ['mcp:wiki/page'], approval: 'first_use', credentials: [] },
];

const call = (resource: string | null, fields: Partial<Call> = {}): Call => ({ tool: 'mcp', verb: 'call', resource, credentials: [], ...fields });

describe('compileGrants for mcp', () => {
  it('compiles several mcp grants, each with the pinned tools it covers, in an order that does not depend on the source', () => {
    const { set, issues } = compileGrants(digest, grants, servers);
    const reversed = compileGrants(digest, [...grants].reverse(), servers);

    expect(issues).toEqual([]);
    expect(reversed.set).toEqual(set);
    expect(set.grants.map((grant) => [grant.resources, grant.approval, grant.mcpTools])).toEqual([
      [['tracker/*'], 'never', [{ resource: 'tracker/create_issue', destructive: false }, { resource: 'tracker/delete_issue', destructive: true }, { resource: 'tracker/search', destructive: false }]],
      [['tracker/create_issue'], 'always', [{ resource: 'tracker/create_issue', destructive: false }]],
      [['wiki/page'], 'first_use', [{ resource: 'wiki/page', destructive: false }]],
    ]);
  });

  it('leaves a resource a second mcp grant names out of it, granting less', () => {
    const { set, issues } = compileGrants(digest, [grants[0]!, { ...grants[0]!, approval: 'always' }, { ...grants[2]!, resources: ['wiki/page', 'tracker/*'] }], servers);

    expect(set.grants.map((grant) => [grant.resources, grant.approval])).toEqual([
      [['tracker/*'], 'never'],
      [['wiki/page'], 'first_use'],
    ]);
    expect(issues).toEqual([
      { index: 1, message: 'second grant for an mcp resource: left out of this grant' },
      { index: 2, message: 'second grant for an mcp resource: left out of this grant' },
    ]);
  });

  it('pins no tool when the servers are not known, and hashes mcpTools only on mcp grants', () => {
    const unknown = compileGrants(digest, grants).set;
    const files = [{ tool: 'files', verbs: ['read'], resources: ['reports/**'], approval: 'never', credentials: [] }];
    const withoutMcp = compileGrants(digest, files, servers).set;

    expect(unknown.grants.map((grant) => grant.mcpTools)).toEqual([[], [], []]);
    expect(withoutMcp.grants[0]!.mcpTools).toBeNull();
    expect(withoutMcp.grantsDigest).toBe(grantsDigest(digest, [{ ...withoutMcp.grants[0]!, mcpTools: undefined as never }]));
    expect(compileGrants(digest, grants, servers).set.grantsDigest).not.toBe(unknown.grantsDigest);
  });
});

describe('checkCall for mcp', () => {
  const { set } = compileGrants(digest, grants, servers);

  it.each([
    ['a tool covered by its server\'s "*" only', call('tracker/search'), { ok: true, approval: 'never', resourceKey: 'tracker/search' }],
    ['a tool its own grant names, before the "*"', call('tracker/create_issue', { credentials: ['tracker_token'] }), { ok: true, approval: 'always', resourceKey: 'tracker/create_issue' }],
    ['a destructive tool under a grant without approval', call('tracker/delete_issue'), { ok: true, approval: 'always', resourceKey: 'tracker/delete_issue' }],
    ['an id written with the mcp: prefix', call('mcp:wiki/page'), { ok: true, approval: 'first_use', resourceKey: 'wiki/page' }],
  ])('grants %s', (_label, request, expected) => {
    const sut = checkCall(request, set);

    expect(sut.ok && { ok: sut.ok, approval: sut.grant.approval, resourceKey: sut.resourceKey }).toEqual(expected);
  });

  it.each([
    ['a tool the version did not pin', call('tracker/added_later'), 'resource_not_granted'],
    ['a tool of a server no grant covers', call('wiki/edit'), 'resource_not_granted'],
    ['a credential the deciding grant lacks', call('tracker/search', { credentials: ['tracker_token'] }), 'credential_not_granted'],
    ['another verb', call('tracker/search', { verb: 'list' }), 'verb_not_granted'],
    ['no resource', call(null), 'resource_required'],
    ['a malformed resource', call('tracker'), 'resource_invalid'],
    ['a server-wide resource', call('tracker/*'), 'resource_not_granted'],
  ])('denies %s', (_label, request, code) => {
    expect(checkCall(request, set)).toMatchObject({ ok: false, code });
  });

  it('answers tool_not_granted when no mcp grant exists', () => {
    const files = compileGrants(digest, [{ tool: 'files', verbs: ['read'], resources: ['reports/**'], approval: 'never', credentials: [] }], servers).set;

    expect(checkCall(call('tracker/search'), files)).toMatchObject({ ok: false, code: 'tool_not_granted' });
  });
});
