import { canonicalJson, sha256Hex } from '@packetagent/contracts';
import { compileGrants, grantsDigest, storedGrant } from './compile-grants';

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
    expect(set.grants).toEqual([{ tool: 'files', verbs: ['read'], resources: [], approval: 'never', approvalRules: null, credentials: [], approvalTimeoutSeconds: null, computers: null, mcpTools: null }]);
    expect(issues.map((issue) => issue.index)).toEqual([0, 1, 2]);
  });

  it('compiles the computers of run_command sorted and once each, null when the grant names none', () => {
    const { set, issues } = compileGrants(digest, [
      { tool: 'run_command', verbs: ['exec'], resources: ['make *'], approval: 'never', credentials: [], computers: ['build-box', 'arm-runner', 'build-box'] },
      { tool: 'files', verbs: ['read'], resources: ['reports/**'], approval: 'never', credentials: [] },
    ]);
    expect(issues).toEqual([]);
    expect(set.grants.map((grant) => [grant.tool, grant.computers])).toEqual([
      ['files', null],
      ['run_command', ['arm-runner', 'build-box']],
    ]);
  });

  it('leaves out computer names that are not valid, and computers on any other tool, granting less', () => {
    const { set, issues } = compileGrants(digest, [
      { tool: 'run_command', verbs: ['exec'], resources: ['make *'], computers: ['Build Box', 'arm-runner'] },
      { tool: 'http_fetch', verbs: ['GET'], resources: ['https://ci.example.com/*'], computers: ['arm-runner'] },
      { tool: 'files', verbs: ['read'], resources: ['reports/**'], computers: ['../x'] },
    ]);
    expect(set.grants.map((grant) => [grant.tool, grant.computers])).toEqual([
      ['files', null],
      ['http_fetch', null],
      ['run_command', ['arm-runner']],
    ]);
    expect(issues).toEqual([
      { index: 0, message: 'a computer name is not valid' },
      { index: 1, message: 'http_fetch takes no computers' },
      { index: 2, message: 'files takes no computers' },
    ]);
  });

  it('keeps the digest grants without computers had before computers existed', () => {
    const tools = [{ tool: 'run_command', verbs: ['exec'], resources: ['git status'], approval: 'never', credentials: ['ci_token'] }];
    const { set } = compileGrants(digest, tools);
    const before = [{ tool: 'run_command', verbs: ['exec'], resources: ['git status'], approval: 'never', credentials: ['ci_token'], approvalTimeoutSeconds: null }];
    expect(set.grantsDigest).toBe(sha256Hex(canonicalJson({ effectiveDigest: digest, grants: before })));
    // A set stored before computers existed verifies, and reads as naming none.
    expect(grantsDigest(digest, before as never)).toBe(set.grantsDigest);
    expect(storedGrant(before[0] as never).computers).toBeNull();
    expect(compileGrants(digest, [{ ...tools[0], computers: ['arm-runner'] }]).set.grantsDigest).not.toBe(set.grantsDigest);
  });

  it('keeps the mode of approval rules, binds the rules into the digest, and leaves plain modes hashed as before', () => {
    const plain = compileGrants(digest, [{ tool: 'slack_post', resources: ['#releases'], approval: 'always' }]).set;
    const rules = { mode: 'always', deadline: '2h', quorum: 2, approvers: 'admin' };
    const ruled = compileGrants(digest, [{ tool: 'slack_post', resources: ['#releases'], approval: rules }]).set;
    expect(ruled.grants[0]).toMatchObject({ approval: 'always', approvalRules: rules });
    expect(plain.grants[0]!.approvalRules).toBeNull();
    expect(ruled.grantsDigest).not.toBe(plain.grantsDigest);
    const { approvalRules: _rules, ...before } = plain.grants[0]!;
    expect(grantsDigest(digest, [before as never])).toBe(plain.grantsDigest);
    expect(storedGrant(before as never).approvalRules).toBeNull();
  });
});
