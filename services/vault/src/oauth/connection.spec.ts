import { InvalidGrantError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { connectionOf, decideToken, parseStoredConnection, refreshed, refreshFailure, type StoredConnection } from './connection';

const t0 = new Date('2026-12-01T10:00:00.000Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const base = {
  resource: 'https://mcp.example.com/mcp',
  resourceIndicator: 'https://mcp.example.com/mcp',
  issuer: 'https://auth.example.com/',
  metadata: { issuer: 'https://auth.example.com/', authorization_endpoint: 'https://auth.example.com/authorize', token_endpoint: 'https://auth.example.com/token', response_types_supported: ['code'] },
  client: { client_id: 'client-1', redirect_uris: ['https://packetagent.example.com/api/v1/mcp/oauth/callback'] },
};
const given = (tokens: { expires_in?: number; refresh_token?: string }): StoredConnection => connectionOf({ access_token: 'at-1', token_type: 'Bearer', ...tokens }, base, t0);

describe(decideToken.name, () => {
  it('uses a token with more time left than the margin', () => {
    expect(decideToken(given({ expires_in: 3600, refresh_token: 'rt-1' }), null, at(3000), 60_000)).toEqual({ kind: 'use' });
  });

  it('refreshes a token within the margin of its expiry, and one already expired', () => {
    expect(decideToken(given({ expires_in: 3600, refresh_token: 'rt-1' }), null, at(3550), 60_000)).toEqual({ kind: 'refresh', expired: false });
    expect(decideToken(given({ expires_in: 3600, refresh_token: 'rt-1' }), null, at(3600), 60_000)).toEqual({ kind: 'refresh', expired: true });
  });

  it('caps the margin at half the lifetime, so a short-lived token is not refreshed on every call', () => {
    const shortLived = given({ expires_in: 20, refresh_token: 'rt-1' });
    expect(decideToken(shortLived, null, at(9), 60_000)).toEqual({ kind: 'use' });
    expect(decideToken(shortLived, null, at(11), 60_000)).toEqual({ kind: 'refresh', expired: false });
  });

  it('uses a token whose expiry the server did not give', () => {
    expect(decideToken(given({}), null, at(86_400 * 365), 60_000)).toEqual({ kind: 'use' });
  });

  it('uses a token without a refresh token until it expires, then asks for an operator', () => {
    expect(decideToken(given({ expires_in: 3600 }), null, at(3590), 60_000)).toEqual({ kind: 'use' });
    expect(decideToken(given({ expires_in: 3600 }), null, at(3600), 60_000)).toEqual({ kind: 'reconnect', reason: expect.stringContaining('no refresh token') });
  });

  it('asks for an operator, with the stored reason, once a refresh was refused', () => {
    expect(decideToken(given({ expires_in: 3600, refresh_token: 'rt-1' }), { reason: 'invalid_grant' }, at(1), 60_000)).toEqual({ kind: 'reconnect', reason: 'invalid_grant' });
  });
});

describe(refreshFailure.name, () => {
  it("takes the authorization server's refusal as final, and anything else as worth another try", () => {
    expect(refreshFailure(new InvalidGrantError('refresh token revoked'))).toEqual({ permanent: true, reason: expect.stringContaining('invalid_grant: refresh token revoked') });
    expect(refreshFailure(new ServerError('down for maintenance'))).toMatchObject({ permanent: false });
    expect(refreshFailure(new Error('connect ECONNREFUSED'))).toEqual({ permanent: false, reason: expect.stringContaining('could not be reached') });
  });
});

describe(refreshed.name, () => {
  it('keeps the refresh token when the server did not rotate it, and takes the new one when it did', () => {
    const connection = given({ expires_in: 3600, refresh_token: 'rt-1' });
    expect(refreshed(connection, { access_token: 'at-2', token_type: 'Bearer', expires_in: 3600 }, at(3550)).tokens).toMatchObject({ access_token: 'at-2', refresh_token: 'rt-1' });
    expect(refreshed(connection, { access_token: 'at-3', token_type: 'Bearer', expires_in: 60, refresh_token: 'rt-2' }, at(3550))).toMatchObject({
      tokens: { refresh_token: 'rt-2' },
      expiresAt: at(3610).toISOString(),
      obtainedAt: at(3550).toISOString(),
    });
  });
});

describe(parseStoredConnection.name, () => {
  it('reads back what was stored and refuses anything else', () => {
    const connection = given({ expires_in: 60, refresh_token: 'rt-1' });
    expect(parseStoredConnection(Buffer.from(JSON.stringify(connection)))).toEqual(connection);
    expect(parseStoredConnection(Buffer.from('xoxb-a-plain-secret'))).toBeNull();
    expect(parseStoredConnection(Buffer.from(JSON.stringify({ ...connection, v: 2 })))).toBeNull();
  });
});
