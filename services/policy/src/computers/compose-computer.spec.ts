import { CONSERVATIVE_COMPUTER_POLICY, type ComputerView } from '@packetagent/contracts';
import { composeComputer, type ComputerLookup } from './compose-computer';

function record(policy: Partial<ComputerView['policy']>, overrides: Partial<ComputerView> = {}): ComputerLookup {
  const view: ComputerView = {
    workspaceId: 'ws1',
    name: 'build-box',
    kind: 'ssh',
    description: '',
    ssh: { host: '10.0.0.5', port: 22, user: 'ci', hostKeys: [], keyCredential: 'build_box_key' },
    roots: ['/srv/build'],
    policy: { ...CONSERVATIVE_COMPUTER_POLICY, ...policy },
    capabilities: null,
    version: 1,
    createdBy: { kind: 'user', id: 'u1' },
    createdAt: '2026-11-30T09:00:00.000Z',
    updatedAt: '2026-11-30T09:00:00.000Z',
    status: { state: 'online', observedAt: null, ageMs: null, staleAfterMs: 60_000, detail: '', hostKey: { state: 'pinned', presented: null, at: null } },
    ...overrides,
  };
  return { ok: true, view };
}

const open = { shell: 'allow', write: 'allow', network: 'allow' } as const;

describe(composeComputer.name, () => {
  it('fails closed when the record could not be read, with the reason it was given', () => {
    expect(composeComputer({ ok: false, reason: 'unanswered', text: 'the sandbox service did not answer for computer "build-box"' }, { credentials: [] })).toEqual({
      ok: false,
      code: 'computer_unavailable',
      text: 'the sandbox service did not answer for computer "build-box"',
    });
  });

  it('allows without asking where every axis allows, and names the key to grant', () => {
    expect(composeComputer(record(open), { credentials: [] })).toEqual({ ok: true, name: 'build-box', requirement: 'allow', approval: 'explicit', keyCredential: 'build_box_key' });
  });

  it('asks for a record never configured: every axis asks, approval explicit', () => {
    expect(composeComputer(record({}), { credentials: [] })).toMatchObject({ ok: true, requirement: 'ask', approval: 'explicit' });
  });

  it('reads ask as allow under trust-computer', () => {
    expect(composeComputer(record({ approval: 'trust-computer' }), { credentials: [] })).toMatchObject({ ok: true, requirement: 'allow' });
  });

  it('keeps ask under trust-workspace, for the approval to cover the run', () => {
    expect(composeComputer(record({ write: 'ask', approval: 'trust-workspace' }), { credentials: [] })).toMatchObject({ ok: true, requirement: 'ask', approval: 'trust-workspace' });
  });

  it('denies when any axis denies, whatever the approval mode, naming the axes', () => {
    expect(composeComputer(record({ ...open, network: 'deny', write: 'deny', approval: 'trust-computer' }), { credentials: [] })).toEqual({
      ok: false,
      code: 'computer_policy_denied',
      text: 'computer "build-box" lets no command run (its policy says write: deny, network: deny)',
    });
  });

  it('denies credentials unless the computer allows secrets', () => {
    expect(composeComputer(record(open), { credentials: ['npm_token'] })).toEqual({ ok: false, code: 'computer_secrets_denied', text: 'computer "build-box" takes no secrets (its policy says secrets: deny)' });
    expect(composeComputer(record({ ...open, secrets: 'allow' }), { credentials: ['npm_token'] })).toMatchObject({ ok: true });
  });

  it('reads a policy value it does not know as the conservative one', () => {
    const unknown = record({ ...open, shell: 'sometimes' as never, secrets: 'maybe' as never });
    expect(composeComputer(unknown, { credentials: [] })).toMatchObject({ ok: true, requirement: 'ask' });
    expect(composeComputer(unknown, { credentials: ['npm_token'] })).toMatchObject({ ok: false, code: 'computer_secrets_denied' });
  });

  it('grants no key for a local computer, and refuses an ssh record without a usable key', () => {
    expect(composeComputer(record(open, { kind: 'local', ssh: null, roots: [] }), { credentials: [] })).toMatchObject({ ok: true, keyCredential: null });
    expect(composeComputer(record(open, { ssh: null }), { credentials: [] })).toEqual({ ok: false, code: 'computer_unavailable', text: 'the record of computer "build-box" names no usable key' });
  });
});
