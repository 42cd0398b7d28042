import { completeSetup, insertUser, signIn, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { ApiKeysController } from './api-keys.controller';

interface CreatedKey {
  id: string;
  secret: string;
  role: string;
  expiresAt: string | null;
}

describe(ApiKeysController.name, () => {
  let sut: GatewayTestApp;
  let ws: string;
  let ownerKey: string;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const keysPath = (workspaceId: string) => `/api/v1/workspaces/${workspaceId}/api-keys`;
  const createKey = async (as: string, body: Record<string, unknown>, workspaceId = ws) =>
    sut.request<CreatedKey>('POST', keysPath(workspaceId), { headers: bearer(as), body });

  beforeAll(async () => {
    sut = await startGatewayTestApp();
    ({ workspaceId: ws, apiKey: ownerKey } = await completeSetup(sut));
  });

  afterAll(async () => {
    await sut.close();
  });

  it('creates a key whose secret is shown once, lists it without the secret, and the key works', async () => {
    const created = await createKey(ownerKey, { name: 'ci', role: 'member' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci', role: 'member', expiresAt: null });
    expect(created.body.secret).toMatch(new RegExp(`^pa_${created.body.id}_[A-Za-z0-9_-]{43}$`));

    const list = await sut.request<{ items: Record<string, unknown>[] }>('GET', keysPath(ws), { headers: bearer(ownerKey) });
    expect(list.status).toBe(200);
    const listed = list.body.items.find((item) => item.id === created.body.id);
    expect(listed).toMatchObject({ name: 'ci', role: 'member', prefix: `pa_${created.body.id}_`, revokedAt: null, lastUsedAt: null });
    const secretPart = created.body.secret.slice(`pa_${created.body.id}_`.length);
    expect(list.text).not.toContain(secretPart);
    expect(Object.keys(listed!)).not.toEqual(expect.arrayContaining(['secret', 'secretHash']));

    const me = await sut.request('GET', '/api/v1/auth/me', { headers: bearer(created.body.secret) });
    expect(me.body).toMatchObject({ kind: 'api_key', id: created.body.id, workspaces: [{ id: ws, role: 'member' }] });

    const events = await sut.db.pool.query(`SELECT data, metadata FROM events WHERE type = 'api_key.created' AND data->>'apiKeyId' = $1`, [created.body.id]);
    expect(events.rows).toHaveLength(1);
    expect(JSON.stringify(events.rows)).not.toContain(secretPart);
  });

  it('revokes a key: it answers 401 from then on and the revocation is an audit event', async () => {
    const created = await createKey(ownerKey, { name: 'short-lived', role: 'viewer' });

    const revoked = await sut.request('DELETE', `${keysPath(ws)}/${created.body.id}`, { headers: bearer(ownerKey) });
    expect(revoked.status).toBe(204);

    const refused = await sut.request('GET', '/api/v1/auth/me', { headers: bearer(created.body.secret) });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'api_key_invalid', detail: 'the API key has been revoked' });
    const events = await sut.db.pool.query(`SELECT data, metadata->'actor' AS actor FROM events WHERE type = 'api_key.revoked'`);
    expect(events.rows).toContainEqual({ data: { workspaceId: ws, apiKeyId: created.body.id }, actor: { kind: 'api_key', id: ownerKey.split('_')[1] } });

    const again = await sut.request('DELETE', `${keysPath(ws)}/${created.body.id}`, { headers: bearer(ownerKey) });
    expect(again.status).toBe(204);
    const unknown = await sut.request('DELETE', `${keysPath(ws)}/0000000000000000dead`, { headers: bearer(ownerKey) });
    expect(unknown.status).toBe(404);
  });

  it('answers 401 for an expired key, and refuses an expiry in the past', async () => {
    const created = await createKey(ownerKey, { name: 'expiring', role: 'viewer', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(created.status).toBe(201);
    expect((await sut.request('GET', '/api/v1/auth/me', { headers: bearer(created.body.secret) })).status).toBe(200);
    await sut.db.pool.query(`UPDATE identity.api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.body.id]);

    const refused = await sut.request('GET', '/api/v1/auth/me', { headers: bearer(created.body.secret) });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'api_key_invalid', detail: 'the API key has expired' });

    const past = await createKey(ownerKey, { name: 'past', role: 'viewer', expiresAt: '2020-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.body).toMatchObject({ errors: [{ path: 'expiresAt', message: 'must be in the future' }] });
  });

  it('answers 401 alike for an unknown key, a wrong secret and a malformed header', async () => {
    const created = await createKey(ownerKey, { name: 'victim', role: 'viewer' });
    const wrongSecret = `pa_${created.body.id}_${'A'.repeat(43)}`;
    for (const authorization of [`Bearer pa_00000000000000000000_${'A'.repeat(43)}`, `Bearer ${wrongSecret}`, 'Bearer nonsense']) {
      const answer = await sut.request('GET', '/api/v1/auth/me', { headers: { authorization } });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ code: 'api_key_invalid', detail: 'the API key is not valid' });
    }
    const basic = await sut.request('GET', '/api/v1/auth/me', { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expect(basic.status).toBe(401);
    expect(basic.body).toMatchObject({ code: 'unauthenticated' });
  });

  it('caps a new key at its creator\'s role and refuses to revoke a key above it', async () => {
    const admin = await createKey(ownerKey, { name: 'admin', role: 'admin' });
    const owner2 = await createKey(ownerKey, { name: 'owner-2', role: 'owner' });
    expect(owner2.status).toBe(201);

    const tooHigh = await createKey(admin.body.secret, { name: 'escalate', role: 'owner' });
    expect(tooHigh.status).toBe(403);
    expect(tooHigh.body).toMatchObject({ code: 'role_ceiling_exceeded' });
    expect((await createKey(admin.body.secret, { name: 'peer', role: 'admin' })).status).toBe(201);

    const revokeOwner = await sut.request('DELETE', `${keysPath(ws)}/${owner2.body.id}`, { headers: bearer(admin.body.secret) });
    expect(revokeOwner.status).toBe(403);
  });

  it('needs the admin permission: viewer and member keys get 403, admin keys get through', async () => {
    const viewer = await createKey(ownerKey, { name: 'viewer', role: 'viewer' });
    const member = await createKey(ownerKey, { name: 'member', role: 'member' });
    const admin = await createKey(ownerKey, { name: 'admin-2', role: 'admin' });

    for (const key of [viewer.body.secret, member.body.secret]) {
      const list = await sut.request('GET', keysPath(ws), { headers: bearer(key) });
      expect(list.status).toBe(403);
      expect(list.body).toMatchObject({ code: 'permission_denied', detail: 'this needs the "admin" permission in the workspace' });
      expect((await createKey(key, { name: 'x', role: 'viewer' })).status).toBe(403);
    }
    expect((await sut.request('GET', keysPath(ws), { headers: bearer(admin.body.secret) })).status).toBe(200);
  });

  it('answers 404 for another workspace, a missing one and a malformed id alike', async () => {
    const owner = await signIn(sut, 'owner@example.com', 'correct horse battery staple');
    const second = await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { headers: owner.headers(), body: { name: 'Second' } });
    expect(second.status).toBe(201);

    // The setup key belongs to the first workspace only, even though its user owns both.
    const foreign = await sut.request('GET', keysPath(second.body.id), { headers: bearer(ownerKey) });
    const missing = await sut.request('GET', keysPath('ws_00000000000000000000'), { headers: bearer(ownerKey) });
    const malformed = await sut.request('GET', keysPath('ws.bad!'), { headers: bearer(ownerKey) });
    for (const answer of [foreign, missing, malformed]) {
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ code: 'not_found', detail: 'no such workspace' });
    }
    expect((await sut.request('GET', keysPath(second.body.id), { headers: owner.headers() })).status).toBe(200);

    await insertUser(sut, 'stranger@example.com', 'stranger password 1');
    const stranger = await signIn(sut, 'stranger@example.com', 'stranger password 1');
    const strangerAnswer = await sut.request('GET', keysPath(ws), { headers: stranger.headers() });
    expect(strangerAnswer.status).toBe(404);
    const strangerCreate = await sut.request('POST', keysPath(ws), { headers: stranger.headers(), body: { name: 'x', role: 'viewer' } });
    expect(strangerCreate.status).toBe(404);
  });

  it('lets a signed-in admin create keys with the session cookie and the CSRF header', async () => {
    const owner = await signIn(sut, 'owner@example.com', 'correct horse battery staple');
    const created = await sut.request<CreatedKey>('POST', keysPath(ws), { headers: owner.headers(), body: { name: 'from-console', role: 'owner' } });
    expect(created.status).toBe(201);
    const row = await sut.db.pool.query(`SELECT created_by_kind, created_by FROM identity.api_keys WHERE id = $1`, [created.body.id]);
    expect(row.rows[0]).toMatchObject({ created_by_kind: 'user' });
  });
});
