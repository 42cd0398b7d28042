import { Redis } from 'ioredis';
import { sha256 } from '../identity/secrets';
import { problemStatusFor } from '../http/problem';
import {
  completeSetup,
  insertUser,
  OWNER_PASSWORD,
  sessionCookieOf,
  signedIn,
  signIn,
  startGatewayTestApp,
  TEST_REDIS_URL,
  type GatewayTestApp,
  type SignedIn,
} from '../testing/gateway-app.testkit';
import { PasskeysController } from './passkeys.controller';
import { SoftwarePasskey } from './software-authenticator.testkit';

const PUBLIC_URL = 'https://console.example.test';
const RP_ID = 'console.example.test';

interface Options {
  challenge: string;
  user: { id: string };
  excludeCredentials?: { id: string }[];
  allowCredentials?: { id: string }[];
  authenticatorSelection?: Record<string, unknown>;
  rpId?: string;
  userVerification?: string;
}

describe(PasskeysController.name, () => {
  let sut: GatewayTestApp;
  let owner: { workspaceId: string; email: string; password: string; apiKey: string };
  let session: SignedIn;
  let passkey: SoftwarePasskey;
  let passkeyId: string;

  beforeAll(async () => {
    sut = await startGatewayTestApp({ gateway: { publicUrl: PUBLIC_URL } });
    owner = await completeSetup(sut);
    session = await signIn(sut, owner.email, owner.password);
  });

  afterAll(async () => {
    await sut.close();
  });

  const registrationOptions = (as: SignedIn) => sut.request<Options>('POST', '/api/v1/auth/passkeys/registration/options', { headers: as.headers() });
  const loginOptions = (email?: string) => sut.request<Options>('POST', '/api/v1/auth/login/passkey/options', { body: email ? { email } : {} });
  const login = (response: unknown, headers: Record<string, string> = {}) =>
    sut.request<{ csrfToken: string; totpRequired: boolean }>('POST', '/api/v1/auth/login/passkey', { body: { response }, headers });

  async function register(as: SignedIn, key: SoftwarePasskey, name: string): Promise<string> {
    const options = await registrationOptions(as);
    expect(options.status).toBe(200);
    const answer = await sut.request<{ id: string }>('POST', '/api/v1/auth/passkeys', { headers: as.headers(), body: { name, response: key.create(options.body) } });
    expect(answer.status).toBe(201);
    return answer.body.id;
  }

  /** The audit events of one passkey in the owner's workspace, oldest first. */
  async function passkeyAudit(id: string): Promise<{ type: string; data: Record<string, unknown>; actor: { kind: string } }[]> {
    const { rows } = await sut.db.pool.query(
      `SELECT type, data, metadata->'actor' AS actor FROM events WHERE stream_id = $1 AND data->>'passkeyId' = $2 ORDER BY stream_version`,
      [`workspace-${owner.workspaceId}`, id],
    );
    return rows;
  }

  /** Makes the session look as if it signed in `minutes` ago, as Redis would hold it then. */
  async function age(as: SignedIn, minutes: number): Promise<void> {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const key = `${sut.redisKeyPrefix}session:${sha256(as.cookie).toString('hex')}`;
      const record = JSON.parse((await redis.get(key)) as string);
      const then = new Date(Date.now() - minutes * 60_000).toISOString();
      await redis.set(key, JSON.stringify({ ...record, createdAt: then, authenticatedAt: then }), 'KEEPTTL');
    } finally {
      redis.disconnect();
    }
  }

  describe('registration', () => {
    it('registers a discoverable, user-verified passkey and stores its credential', async () => {
      passkey = new SoftwarePasskey(RP_ID, PUBLIC_URL);
      const options = await registrationOptions(session);
      expect(options.status).toBe(200);
      expect(options.body).toMatchObject({
        rp: { id: RP_ID, name: 'PacketAgent' },
        excludeCredentials: [],
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        attestation: 'none',
      });
      const answer = await sut.request<{ id: string; name: string; transports: string[]; lastUsedAt: string | null }>('POST', '/api/v1/auth/passkeys', {
        headers: session.headers(),
        body: { name: 'Work laptop', response: passkey.create(options.body) },
      });
      expect(answer.status).toBe(201);
      expect(answer.body).toMatchObject({ name: 'Work laptop', transports: ['internal', 'hybrid'], lastUsedAt: null });
      passkeyId = answer.body.id;

      const stored = await sut.db.pool.query(`SELECT credential_id, counter, length(public_key) > 0 AS has_key FROM identity.passkeys WHERE id = $1`, [passkeyId]);
      expect(stored.rows).toEqual([{ credential_id: passkey.id, counter: '0', has_key: true }]);
      const again = await registrationOptions(session);
      expect(again.body.excludeCredentials).toEqual([expect.objectContaining({ id: passkey.id, type: 'public-key' })]);
      // Recorded in the owner's workspace by ids alone: neither the name nor the credential.
      const audit = await passkeyAudit(passkeyId);
      expect(audit).toEqual([{ type: 'user.passkey_added', data: { userId: expect.any(String), passkeyId }, actor: { kind: 'user', id: audit[0]!.data['userId'] } }]);
      expect(JSON.stringify(audit)).not.toContain(passkey.id);
    });

    it('refuses a replayed challenge, an answer from another origin, and one without user verification', async () => {
      const options = await registrationOptions(session);
      const key = new SoftwarePasskey(RP_ID, PUBLIC_URL);
      const forged = await sut.request('POST', '/api/v1/auth/passkeys', {
        headers: session.headers(),
        body: { name: 'Forged', response: key.create(options.body, { origin: 'https://evil.example.test' }) },
      });
      expect(forged.status).toBe(400);
      expect(forged.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'response', message: expect.stringContaining('origin') }] });

      // That attempt spent the challenge: the right answer to it is refused too.
      const replayed = await sut.request('POST', '/api/v1/auth/passkeys', { headers: session.headers(), body: { name: 'Late', response: key.create(options.body) } });
      expect(replayed.status).toBe(400);
      expect(replayed.body).toMatchObject({ errors: [{ path: 'response', message: expect.stringContaining('challenge') }] });

      const fresh = await registrationOptions(session);
      const unverified = await sut.request('POST', '/api/v1/auth/passkeys', {
        headers: session.headers(),
        body: { name: 'No PIN', response: key.create(fresh.body, { userVerified: false }) },
      });
      expect(unverified.status).toBe(400);
      const count = await sut.db.pool.query(`SELECT count(*)::int AS n FROM identity.passkeys`);
      expect(count.rows[0].n).toBe(1);
    });

    it('refuses the same authenticator twice', async () => {
      const options = await registrationOptions(session);
      const twice = await sut.request('POST', '/api/v1/auth/passkeys', { headers: session.headers(), body: { name: 'Again', response: passkey.create(options.body) } });
      expect(twice.status).toBe(409);
      expect(twice.body).toMatchObject({ code: 'passkey_already_exists' });
    });

    it('refuses a challenge issued to another user', async () => {
      await insertUser(sut, 'other@example.com', OWNER_PASSWORD);
      const other = await signIn(sut, 'other@example.com', OWNER_PASSWORD);
      const theirs = await registrationOptions(other);
      const answer = await sut.request('POST', '/api/v1/auth/passkeys', {
        headers: session.headers(),
        body: { name: 'Theirs', response: new SoftwarePasskey(RP_ID, PUBLIC_URL).create(theirs.body) },
      });
      expect(answer.status).toBe(400);
    });

    it('needs a recent authentication, which the password confirms again', async () => {
      const stale = await signIn(sut, owner.email, owner.password);
      await age(stale, 30);
      const refused = await registrationOptions(stale);
      expect(refused.body).toMatchObject({ code: 'reauthentication_required' });
      expect(refused.status).toBe(problemStatusFor('reauthentication_required'));

      const wrong = await sut.request('POST', '/api/v1/auth/reauthenticate', { headers: stale.headers(), body: { password: 'not the password' } });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ errors: [{ path: 'password' }] });
      const confirmed = await sut.request<{ validForSeconds: number }>('POST', '/api/v1/auth/reauthenticate', { headers: stale.headers(), body: { password: owner.password } });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body.validForSeconds).toBe(600);
      expect((await registrationOptions(stale)).status).toBe(200);
    });
  });

  describe('sign-in', () => {
    it('signs in with a discoverable passkey into a full session, second factor included', async () => {
      // With TOTP on, a password opens only a pending session; the passkey's user verification is the second factor.
      await sut.db.pool.query(`UPDATE identity.users SET totp_secret = 'JBSWY3DPEHPK3PXP', totp_enabled = true WHERE email = $1`, [owner.email]);
      const options = await loginOptions();
      expect(options.status).toBe(200);
      expect(options.body).toMatchObject({ rpId: RP_ID, userVerification: 'required', allowCredentials: [] });
      const answer = await login(passkey.get(options.body), session.headers());
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ csrfToken: expect.any(String), totpRequired: false });
      const sessionId = sessionCookieOf(answer);
      expect(sessionId).not.toBeNull();
      const me = await sut.request('GET', '/api/v1/auth/me', { headers: signedIn(sessionId!, answer.body.csrfToken).headers(false) });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ kind: 'user', email: owner.email });
      // The session the browser had before is ended.
      expect((await sut.request('GET', '/api/v1/auth/me', { headers: session.headers(false) })).status).toBe(401);
      session = signedIn(sessionId!, answer.body.csrfToken);

      const row = await sut.db.pool.query(`SELECT counter, last_used_at IS NOT NULL AS used FROM identity.passkeys WHERE id = $1`, [passkeyId]);
      expect(row.rows[0]).toEqual({ counter: String(passkey.counter), used: true });
      expect(sut.logger.text()).toContain(`signed in with passkey ${passkeyId}`);
    });

    it('signs in with the e-mail address, offering only that account’s passkeys and a stand-in for an address without any', async () => {
      const options = await loginOptions(owner.email);
      expect(options.body.allowCredentials).toEqual([expect.objectContaining({ id: passkey.id })]);
      expect((await login(passkey.get(options.body))).status).toBe(200);

      const unknown = await loginOptions('nobody@example.com');
      const unknownAgain = await loginOptions('nobody@example.com');
      expect(unknown.body.allowCredentials).toHaveLength(1);
      expect(unknown.body.allowCredentials![0]!.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(unknownAgain.body.allowCredentials).toEqual(unknown.body.allowCredentials);
      const refused = await login(passkey.get(unknown.body));
      expect(refused.status).toBe(401);
    });

    it('refuses a replayed challenge and an assertion from another origin', async () => {
      const options = await loginOptions();
      const first = passkey.get(options.body);
      expect((await login(first)).status).toBe(200);
      const replay = await login(passkey.get(options.body));
      expect(replay.status).toBe(401);
      expect(replay.body).toMatchObject({ code: 'invalid_credentials' });

      const fresh = await loginOptions();
      const forged = await login(passkey.get(fresh.body, { origin: 'https://evil.example.test' }));
      expect(forged.status).toBe(401);
      expect(sessionCookieOf(forged)).toBeNull();
    });

    it('refuses and records a signature counter that goes backwards', async () => {
      const stored = Number((await sut.db.pool.query(`SELECT counter FROM identity.passkeys WHERE id = $1`, [passkeyId])).rows[0].counter);
      expect(stored).toBeGreaterThan(1);
      // A copy of the credential that signed less often than the original: its counter is behind.
      const options = await loginOptions();
      const cloned = await login(passkey.get(options.body, { counter: stored - 1 }));
      expect(cloned.status).toBe(401);
      expect(cloned.body).toMatchObject({ code: 'invalid_credentials' });
      const recorded = await sut.db.pool.query(`SELECT stored_counter, presented_counter FROM identity.passkey_counter_regressions WHERE passkey_id = $1`, [passkeyId]);
      expect(recorded.rows).toEqual([{ stored_counter: String(stored), presented_counter: String(stored - 1) }]);
      expect(sut.logger.text()).toContain(`passkey ${passkeyId} of user`);
      const list = await sut.request<{ items: { id: string; lastCounterRegressionAt: string | null }[] }>('GET', '/api/v1/auth/passkeys', { headers: session.headers(false) });
      expect(list.body.items[0]!.lastCounterRegressionAt).not.toBeNull();
      expect((await passkeyAudit(passkeyId)).at(-1)).toMatchObject({
        type: 'user.passkey_counter_regressed',
        data: { passkeyId, storedCounter: stored, presentedCounter: stored - 1 },
        actor: { kind: 'system', id: 'gateway' },
      });

      // The real authenticator, counting on, still signs in.
      const next = await loginOptions();
      expect((await login(passkey.get(next.body, { counter: stored + 1 }))).status).toBe(200);
    });

    it('refuses another user’s passkey when the sign-in names an address, and a forged user handle', async () => {
      const other = await signIn(sut, 'other@example.com', OWNER_PASSWORD);
      const theirs = new SoftwarePasskey(RP_ID, PUBLIC_URL);
      await register(other, theirs, 'Theirs');
      const forOwner = await loginOptions(owner.email);
      expect((await login(theirs.get(forOwner.body))).status).toBe(401);

      const options = await loginOptions();
      const assertion = passkey.get(options.body);
      const forgedHandle = { ...assertion, response: { ...assertion.response, userHandle: theirs.userHandle! } };
      expect((await login(forgedHandle)).status).toBe(401);
    });
  });

  describe('management', () => {
    it('lists, renames and removes one’s own passkeys, and answers 404 for another user’s', async () => {
      const other = await signIn(sut, 'other@example.com', OWNER_PASSWORD);
      const created = await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { headers: other.headers(), body: { name: 'Elsewhere' } });
      expect(created.status).toBe(201);
      const theirs = await sut.request<{ items: { id: string }[] }>('GET', '/api/v1/auth/passkeys', { headers: other.headers(false) });
      const theirId = theirs.body.items[0]!.id;

      const list = await sut.request<{ items: { id: string; name: string }[] }>('GET', '/api/v1/auth/passkeys', { headers: session.headers(false) });
      expect(list.body.items.map((item) => item.id)).toEqual([passkeyId]);
      expect(JSON.stringify(list.body)).not.toContain(passkey.id);

      const renamed = await sut.request('PATCH', `/api/v1/auth/passkeys/${passkeyId}`, { headers: session.headers(), body: { name: '  Phone  ' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ id: passkeyId, name: 'Phone' });
      const empty = await sut.request('PATCH', `/api/v1/auth/passkeys/${passkeyId}`, { headers: session.headers(), body: { name: ' ' } });
      expect(empty.status).toBe(400);

      for (const answer of [
        await sut.request('PATCH', `/api/v1/auth/passkeys/${theirId}`, { headers: session.headers(), body: { name: 'Mine now' } }),
        await sut.request('DELETE', `/api/v1/auth/passkeys/${theirId}`, { headers: session.headers() }),
        await sut.request('DELETE', '/api/v1/auth/passkeys/not-an-id', { headers: session.headers() }),
      ]) {
        expect(answer.status).toBe(404);
        expect(answer.body).toMatchObject({ code: 'passkey_not_found' });
      }
      const untouched = await sut.db.pool.query(`SELECT name FROM identity.passkeys WHERE id = $1`, [theirId]);
      expect(untouched.rows).toEqual([{ name: 'Theirs' }]);

      const noCsrf = await sut.request('DELETE', `/api/v1/auth/passkeys/${passkeyId}`, { headers: session.headers(false) });
      expect(noCsrf.status).toBe(403);
      await age(session, 30);
      const stale = await sut.request('DELETE', `/api/v1/auth/passkeys/${passkeyId}`, { headers: session.headers() });
      expect(stale.body).toMatchObject({ code: 'reauthentication_required' });

      const options = await loginOptions(owner.email);
      const fresh = await login(passkey.get(options.body));
      const confirmed = signedIn(sessionCookieOf(fresh)!, fresh.body.csrfToken);
      expect((await sut.request('DELETE', `/api/v1/auth/passkeys/${passkeyId}`, { headers: confirmed.headers() })).status).toBe(204);
      expect((await passkeyAudit(passkeyId)).map((event) => event.type)).toEqual(['user.passkey_added', 'user.passkey_counter_regressed', 'user.passkey_removed']);
      expect(await passkeyAudit(theirId)).toEqual([]);
      const gone = await loginOptions();
      expect((await login(passkey.get(gone.body))).status).toBe(401);
    });

    it('is for signed-in users only, not API keys or anonymous callers', async () => {
      expect((await sut.request('GET', '/api/v1/auth/passkeys')).status).toBe(401);
      const byKey = await sut.request('GET', '/api/v1/auth/passkeys', { headers: { authorization: `Bearer ${owner.apiKey}` } });
      expect(byKey.status).toBe(403);
      expect(byKey.body).toMatchObject({ code: 'permission_denied' });
    });
  });

  describe('throttle', () => {
    it('counts refused passkey sign-ins with failed passwords and answers 429 once they are used up', async () => {
      const email = 'other@example.com';
      const stranger = new SoftwarePasskey(RP_ID, PUBLIC_URL);
      // The default allows five failures per address within the window.
      for (let attempt = 0; attempt < 5; attempt++) {
        const options = await loginOptions(email);
        expect((await login(stranger.get(options.body))).status).toBe(401);
      }
      const blocked = await loginOptions(email);
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
      const password = await sut.request('POST', '/api/v1/auth/login', { body: { email, password: OWNER_PASSWORD } });
      expect(password.status).toBe(429);
    });
  });
});
