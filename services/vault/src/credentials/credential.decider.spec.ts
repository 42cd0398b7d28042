import { CredentialNotFoundError } from '../shared/errors';
import { decide, evolve, initialCredential, type Credential, type CredentialCommand, type CredentialEvent } from './credential.decider';

const given = (events: CredentialEvent[]): Credential => events.reduce(evolve, initialCredential('slack_token'));
const stored = (version: number): CredentialEvent => ({ type: 'credential.stored', data: { name: 'slack_token', version, keyId: 'mk-0123456789abcdef' } });
const deleted = (version: number): CredentialEvent => ({ type: 'credential.deleted', data: { name: 'slack_token', version } });
const redeem: CredentialCommand = { kind: 'redeem', grant: { grantId: 'g1', runId: 'run-1', tool: 'slack_post' } };

describe(decide.name, () => {
  it('stores version 1 when the credential never existed', () => {
    expect(decide({ kind: 'store', keyId: 'mk-0123456789abcdef' }, given([]))).toEqual([stored(1)]);
  });

  it('stores the next version when the credential is live or was deleted', () => {
    expect(decide({ kind: 'store', keyId: 'mk-0123456789abcdef' }, given([stored(1)]))).toEqual([stored(2)]);
    expect(decide({ kind: 'store', keyId: 'mk-0123456789abcdef' }, given([stored(1), stored(2), deleted(2)]))).toEqual([stored(3)]);
  });

  it('deletes the live version', () => {
    expect(decide({ kind: 'delete' }, given([stored(1), stored(2)]))).toEqual([deleted(2)]);
    expect(given([stored(1), deleted(1)])).toEqual({ status: 'deleted', name: 'slack_token', lastVersion: 1 });
  });

  it('redeems a grant against the live version', () => {
    expect(decide(redeem, given([stored(1), stored(2)]))).toEqual([
      { type: 'credential.resolved', data: { name: 'slack_token', version: 2, grantId: 'g1', runId: 'run-1', tool: 'slack_post' } },
    ]);
  });

  it('refuses to delete or redeem when the credential is absent or deleted', () => {
    expect(() => decide({ kind: 'delete' }, given([]))).toThrow(CredentialNotFoundError);
    expect(() => decide({ kind: 'delete' }, given([stored(1), deleted(1)]))).toThrow(CredentialNotFoundError);
    expect(() => decide(redeem, given([stored(1), deleted(1)]))).toThrow(CredentialNotFoundError);
  });

  it('stores a connection made by an operator as kind oauth, connected', () => {
    expect(decide({ kind: 'store', keyId: 'mk-0123456789abcdef', oauth: 'connected' }, given([stored(1)]))).toEqual([
      { type: 'credential.stored', data: { name: 'slack_token', version: 2, keyId: 'mk-0123456789abcdef', kind: 'oauth', oauth: 'connected' } },
    ]);
  });

  it("replaces a live connection's version when its tokens are refreshed, and refuses when the name is gone", () => {
    expect(decide({ kind: 'refresh', keyId: 'mk-0123456789abcdef' }, given([stored(1), stored(2)]))).toEqual([
      { type: 'credential.stored', data: { name: 'slack_token', version: 3, keyId: 'mk-0123456789abcdef', kind: 'oauth', oauth: 'refreshed' } },
    ]);
    expect(() => decide({ kind: 'refresh', keyId: 'mk-0123456789abcdef' }, given([stored(1), deleted(1)]))).toThrow(CredentialNotFoundError);
  });
});
