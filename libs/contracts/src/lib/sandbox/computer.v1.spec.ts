import { commandRequirement, ComputerRecordSchema, ComputerSpecSchema, readComputerPolicy } from './computer.v1';

describe('computer policy', () => {
  it('reads an absent policy, an absent field and an unknown value as the conservative one', () => {
    const conservative = { network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit' };
    expect(readComputerPolicy(undefined)).toEqual(conservative);
    expect(readComputerPolicy({})).toEqual(conservative);
    expect(readComputerPolicy({ approval: 'trust-everything', secrets: true, shell: 'yes' })).toEqual(conservative);
    expect(readComputerPolicy({ shell: 'allow', secrets: 'allow', approval: 'trust-workspace' })).toEqual({ ...conservative, shell: 'allow', secrets: 'allow', approval: 'trust-workspace' });
  });

  it('refuses an unknown value a client sends, instead of silently defaulting it', () => {
    const parsed = ComputerSpecSchema.safeParse({ kind: 'local', policy: { approval: 'trust-everything' } });
    expect(parsed.success).toBe(false);
  });

  it('asks of a command the strictest of shell, write and network; trust-computer reads ask as allow, never deny', () => {
    const policy = readComputerPolicy({ shell: 'allow', write: 'allow', network: 'allow' });
    expect(commandRequirement(policy)).toBe('allow');
    expect(commandRequirement({ ...policy, network: 'ask' })).toBe('ask');
    expect(commandRequirement({ ...policy, network: 'ask', approval: 'trust-computer' })).toBe('allow');
    expect(commandRequirement({ ...policy, write: 'deny', approval: 'trust-computer' })).toBe('deny');
  });

  it('reads a stored record with its policy filled in, and refuses one of another layout', () => {
    const record = { recordVersion: 1, name: 'box', kind: 'local', description: '', ssh: null, roots: [], capabilities: null, createdBy: { kind: 'user', id: 'u' }, createdAt: '2026-12-01T00:00:00.000Z', updatedAt: '2026-12-01T00:00:00.000Z' };
    expect(ComputerRecordSchema.parse(record).policy.secrets).toBe('deny');
    expect(ComputerRecordSchema.safeParse({ ...record, recordVersion: 2 }).success).toBe(false);
  });

  it('takes only absolute, normalised roots', () => {
    for (const root of ['relative', '/a/../b', '/a/./b', '/a//b', '/a/', '/a\u0000b']) {
      expect(ComputerSpecSchema.safeParse({ kind: 'ssh', ssh: { host: 'h', user: 'u', keyCredential: 'k' }, roots: [root] }).success).toBe(false);
    }
    expect(ComputerSpecSchema.parse({ kind: 'ssh', ssh: { host: 'h', user: 'u', keyCredential: 'k' }, roots: ['/srv/app', '/'] }).roots).toEqual(['/srv/app', '/']);
  });
});
