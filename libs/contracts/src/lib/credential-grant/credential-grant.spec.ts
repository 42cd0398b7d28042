import { randomBytes } from 'node:crypto';
import {
  CredentialGrantExpiredError,
  CredentialGrantInvalidError,
  grantSigningKeys,
  signCredentialGrant,
  verifyCredentialGrant,
  type CredentialGrant,
} from './credential-grant';

const grant: CredentialGrant = {
  grantId: 'g1',
  workspaceId: 'ws_1',
  runId: 'run-1',
  tool: 'slack_post',
  credential: 'slack_release_channel',
  expiresAt: '2026-11-30T10:00:30.000Z',
};
const before = new Date('2026-11-30T10:00:00.000Z');

describe(verifyCredentialGrant.name, () => {
  const keys = grantSigningKeys(randomBytes(32).toString('base64url'));

  it('returns the grant signed with the policy key before it expires', () => {
    expect(verifyCredentialGrant(signCredentialGrant(grant, keys.privateKey), keys.publicKey, before)).toEqual(grant);
  });

  it('refuses a grant signed with another key, a changed grant, and a malformed token', () => {
    const other = grantSigningKeys();
    const token = signCredentialGrant(grant, other.privateKey);
    expect(() => verifyCredentialGrant(token, keys.publicKey, before)).toThrow(CredentialGrantInvalidError);
    const [, signature] = signCredentialGrant(grant, keys.privateKey).split('.');
    const widened = Buffer.from(JSON.stringify({ ...grant, credential: 'prod_db_password' })).toString('base64url');
    expect(() => verifyCredentialGrant(`${widened}.${signature}`, keys.publicKey, before)).toThrow('credential grant signature does not verify');
    expect(() => verifyCredentialGrant('not-a-grant', keys.publicKey, before)).toThrow('malformed credential grant');
  });

  it('refuses an expired grant', () => {
    const token = signCredentialGrant(grant, keys.privateKey);
    expect(() => verifyCredentialGrant(token, keys.publicKey, new Date('2026-11-30T10:00:30.000Z'))).toThrow(CredentialGrantExpiredError);
  });

  it('derives the same key pair from the same seed', () => {
    const seed = randomBytes(32).toString('base64url');
    const token = signCredentialGrant(grant, grantSigningKeys(seed).privateKey);
    expect(verifyCredentialGrant(token, grantSigningKeys(seed).publicKey, before)).toEqual(grant);
    expect(() => grantSigningKeys('short')).toThrow('32 bytes');
  });
});
