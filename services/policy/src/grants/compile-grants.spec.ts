import { compileGrants } from './compile-grants';

const digest = 'e'.repeat(64);

describe(compileGrants.name, () => {
  it('gives the same grants and digest whatever the order and spelling of the source', () => {
    const a = compileGrants(digest, [
      { tool: 'run_command', verbs: ['exec'], resources: ['git  status', 'git log *'], approval: 'never', credentials: [] },
      { tool: 'http_fetch', verbs: ['POST', 'GET'], resources: ['HTTPS://CI.example.com./builds/*'], approval: 'always', credentials: ['b', 'a'] },
    ]);
    const b = compileGrants(digest, [
      { tool: 'http_fetch', verbs: ['GET', 'POST'], resources: ['https://ci.example.com/builds/*'], approval: 'always', credentials: ['a', 'b'] },
      { tool: 'run_command', verbs: ['exec'], resources: ['git log *', 'git status'], approval: 'never', credentials: [] },
    ]);
    expect(a.set).toEqual(b.set);
    expect(a.set.grants.map((grant) => grant.tool)).toEqual(['http_fetch', 'run_command']);
    expect(a.set.grants[0]).toMatchObject({ verbs: ['GET', 'POST'], resources: ['https://ci.example.com/builds/*'], credentials: ['a', 'b'] });
  });

  it('binds the digest to the effective digest when the grants are equal', () => {
    const tools = [{ tool: 'files', verbs: ['read'], resources: ['reports/**'], approval: 'never', credentials: [] }];
    expect(compileGrants(digest, tools).set.grantsDigest).not.toBe(compileGrants('f'.repeat(64), tools).set.grantsDigest);
  });

  it('leaves out what does not compile so that it grants less, never more', () => {
    const { set, issues } = compileGrants(digest, [
      { tool: 'shell', verbs: ['exec'], resources: ['*'] },
      { tool: 'files', verbs: ['read', 'format'], resources: ['../outside'], approval: 'never', credentials: [] },
      'not a grant',
    ]);
    expect(set.grants).toEqual([{ tool: 'files', verbs: ['read'], resources: [], approval: 'never', credentials: [], approvalTimeoutSeconds: null }]);
    expect(issues.map((issue) => issue.index)).toEqual([0, 1, 2]);
  });
});
