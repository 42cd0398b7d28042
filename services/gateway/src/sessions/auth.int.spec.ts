import { currentTotp } from './totp';
import { AuthController } from './auth.controller';
import {
  completeSetup,
  sessionCookieOf,
  signedIn,
  signIn,
  startGatewayTestApp,
  type GatewayTestApp,
  type SignedIn,
} from '../testing/gateway-app.testkit';

/** A six-digit code that matches none of the steps the server accepts right now. */
function wrongCode(secret: string): string {
  const valid = new Set([-60_000, -30_000, 0, 30_000, 60_000].map((offset) => currentTotp(secret, Date.now() + offset)));
  let code = 0;
  while (valid.has(String(code).padStart(6, '0'))) code++;
  return String(code).padStart(6, '0');
}

describe(AuthController.name, () => {
  let sut: GatewayTestApp;
  let owner: { workspaceId: string; apiKey: string; email: string; password: string };

  beforeAll(async () => {
    sut = await startGatewayTestApp();
    owner = await completeSetup(sut);
  });

  afterAll(async () => {
    await sut.close();
  });

  describe('login', () => {
    it('answers a wrong password and an unknown address with the same 401', async () => {
      const wrong = await sut.request('POST', '/api/v1/auth/login', { body: { email: owner.email, password: 'not the password' } });
      const unknown = await sut.request('POST', '/api/v1/auth/login', { body: { email: 'nobody@example.com', password: 'not the password' } });
      for (const answer of [wrong, unknown]) {
        expect(answer.status).toBe(401);
        expect(sessionCookieOf(answer)).toBeNull();
      }
      const { requestId: _a, ...wrongBody } = wrong.body;
      const { requestId: _b, ...unknownBody } = unknown.body;
      expect(wrongBody).toEqual(unknownBody);
      expect(wrongBody).toMatchObject({ code: 'invalid_credentials' });
    });

    it('sets an HttpOnly, SameSite=Strict session cookie and returns a CSRF token', async () => {
      const answer = await sut.request<{ csrfToken: string; totpRequired: boolean }>('POST', '/api/v1/auth/login', {
        body: { email: 'OWNER@example.com', password: owner.password },
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), totpRequired: false });
      const cookie = answer.headers.getSetCookie().find((value) => value.startsWith('pa_session='));
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; SameSite=Strict/);
      expect(cookie).toMatch(/; Path=\//);
      expect(cookie).toMatch(/; Max-Age=43200/);
      expect(cookie).not.toMatch(/Secure/);
    });

    it('keeps sessions in Redis under a hash of the session id, with the TTL', async () => {
      const session = await signIn(sut, owner.email, owner.password);
      const { Redis } = await import('ioredis');
      const redis = new Redis(process.env['PACKETAGENT_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379');
      try {
        const keys = await redis.keys(`${sut.redisKeyPrefix}session:*`);
        expect(keys.length).toBeGreaterThan(0);
        expect(keys.join()).not.toContain(session.cookie);
        const ttl = await redis.ttl(keys[0]!);
        expect(ttl).toBeGreaterThan(43_000);
        expect(ttl).toBeLessThanOrEqual(43_200);
      } finally {
        redis.disconnect();
      }
    });
  });

  describe('CSRF', () => {
    let session: SignedIn;

    beforeAll(async () => {
      session = await signIn(sut, owner.email, owner.password);
    });

    it('refuses a cookie-authenticated change without the CSRF header or with a wrong one', async () => {
      const missing = await sut.request('POST', '/api/v1/workspaces', { headers: session.headers(false), body: { name: 'x' } });
      const wrong = await sut.request('POST', '/api/v1/workspaces', { headers: { ...session.headers(false), 'x-csrf-token': 'forged' }, body: { name: 'x' } });
      for (const answer of [missing, wrong]) {
        expect(answer.status).toBe(403);
        expect(answer.body).toMatchObject({ code: 'csrf_token_invalid' });
      }
      const count = await sut.db.pool.query(`SELECT count(*)::int AS n FROM identity.workspaces WHERE name = 'x'`);
      expect(count.rows[0].n).toBe(0);
    });

    it('accepts a cookie-authenticated change with the header, and reads without it', async () => {
      const created = await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { headers: session.headers(), body: { name: 'Mine' } });
      expect(created.status).toBe(201);
      const list = await sut.request<{ items: { id: string; role: string }[] }>('GET', '/api/v1/workspaces', { headers: session.headers(false) });
      expect(list.status).toBe(200);
      expect(list.body.items).toContainEqual(expect.objectContaining({ id: created.body.id, role: 'owner' }));
      const events = await sut.db.pool.query(`SELECT type, metadata->'actor' AS actor FROM events WHERE stream_id = $1 ORDER BY stream_version`, [
        `workspace-${created.body.id}`,
      ]);
      expect(events.rows.map((row) => row.type)).toEqual(['workspace.created', 'member.added']);
      expect(events.rows[0].actor).toMatchObject({ kind: 'user' });
    });

    it('needs no CSRF header with a bearer API key', async () => {
      const answer = await sut.request('POST', `/api/v1/workspaces/${owner.workspaceId}/api-keys`, {
        headers: { authorization: `Bearer ${owner.apiKey}` },
        body: { name: 'bearer', role: 'viewer' },
      });
      expect(answer.status).toBe(201);
    });

    it('lets only signed-in users create workspaces, not API keys', async () => {
      const answer = await sut.request('POST', '/api/v1/workspaces', { headers: { authorization: `Bearer ${owner.apiKey}` }, body: { name: 'by key' } });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ code: 'permission_denied' });
    });
  });

  describe('logout', () => {
    it('ends the session: the cookie is cleared and the old id answers 401', async () => {
      const session = await signIn(sut, owner.email, owner.password);
      expect((await sut.request('GET', '/api/v1/auth/me', { headers: session.headers(false) })).status).toBe(200);

      const answer = await sut.request('POST', '/api/v1/auth/logout', { headers: session.headers() });
      expect(answer.status).toBe(204);
      expect(answer.headers.getSetCookie().find((value) => value.startsWith('pa_session='))).toMatch(/^pa_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/);

      const after = await sut.request('GET', '/api/v1/auth/me', { headers: session.headers(false) });
      expect(after.status).toBe(401);
      expect(after.body).toMatchObject({ code: 'unauthenticated' });
    });

    it('needs the CSRF header too', async () => {
      const session = await signIn(sut, owner.email, owner.password);
      expect((await sut.request('POST', '/api/v1/auth/logout', { headers: session.headers(false) })).status).toBe(403);
    });
  });

  describe('TOTP', () => {
    let secret: string;
    let recoveryCodes: string[];

    it('enrols, refuses a wrong code, then enables with a right one and returns ten recovery codes once', async () => {
      const session = await signIn(sut, owner.email, owner.password);
      const enrol = await sut.request<{ otpauthUri: string; secret: string }>('POST', '/api/v1/auth/totp/enrol', { headers: session.headers() });
      expect(enrol.status).toBe(200);
      expect(enrol.body.otpauthUri).toMatch(/^otpauth:\/\/totp\/PacketAgent:owner%40example\.com\?/);
      secret = enrol.body.secret;

      const wrong = await sut.request('POST', '/api/v1/auth/totp/verify', { headers: session.headers(), body: { code: wrongCode(secret) } });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ errors: [{ path: 'code' }] });

      const verify = await sut.request<{ recoveryCodes: string[] }>('POST', '/api/v1/auth/totp/verify', {
        headers: session.headers(),
        body: { code: currentTotp(secret) },
      });
      expect(verify.status).toBe(200);
      recoveryCodes = verify.body.recoveryCodes;
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);

      const stored = await sut.db.pool.query(`SELECT count(*)::int AS n FROM identity.recovery_codes`);
      expect(stored.rows[0].n).toBe(10);
      const hashes = await sut.db.pool.query(`SELECT encode(code_hash, 'hex') AS h FROM identity.recovery_codes`);
      expect(JSON.stringify(hashes.rows)).not.toContain(recoveryCodes[0]!.replace(/-/g, ''));

      const events = await sut.db.pool.query(`SELECT stream_id, data FROM events WHERE type = 'user.totp_enabled'`);
      expect(events.rows.map((row) => row.stream_id)).toContain(`workspace-${owner.workspaceId}`);
      expect(JSON.stringify(events.rows)).not.toContain(secret);

      const again = await sut.request('POST', '/api/v1/auth/totp/enrol', { headers: session.headers() });
      expect(again.status).toBe(409);
    });

    it('starts a pending session that grants nothing until a TOTP code completes it', async () => {
      const pending = await signIn(sut, owner.email, owner.password);
      expect(pending.totpRequired).toBe(true);
      const blocked = await sut.request('GET', '/api/v1/auth/me', { headers: pending.headers(false) });
      expect(blocked.status).toBe(401);
      expect(blocked.body).toMatchObject({ code: 'totp_required' });

      // The next step's code: unused so far, and still valid if the clock crosses a step boundary.
      const code = currentTotp(secret, Date.now() + 30_000);
      const completed = await sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/totp', { headers: pending.headers(), body: { code } });
      expect(completed.status).toBe(200);
      const sessionId = sessionCookieOf(completed);
      expect(sessionId).not.toBeNull();
      expect(sessionId).not.toBe(pending.cookie);
      const full = signedIn(sessionId!, completed.body.csrfToken);
      const me = await sut.request('GET', '/api/v1/auth/me', { headers: full.headers(false) });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ kind: 'user', email: owner.email, totpEnabled: true });
      expect((await sut.request('GET', '/api/v1/auth/me', { headers: pending.headers(false) })).status).toBe(401);

      // The same code a second time is a replay.
      const other = await signIn(sut, owner.email, owner.password);
      const replay = await sut.request('POST', '/api/v1/auth/totp', { headers: other.headers(), body: { code } });
      expect(replay.status).toBe(401);
      expect(replay.body).toMatchObject({ code: 'invalid_totp_code' });
    });

    it('completes a pending session with a recovery code, once', async () => {
      const pending = await signIn(sut, owner.email, owner.password);
      const first = await sut.request('POST', '/api/v1/auth/totp', { headers: pending.headers(), body: { code: recoveryCodes[0]!.toUpperCase() } });
      expect(first.status).toBe(200);

      const another = await signIn(sut, owner.email, owner.password);
      const reused = await sut.request('POST', '/api/v1/auth/totp', { headers: another.headers(), body: { code: recoveryCodes[0] } });
      expect(reused.status).toBe(401);
      const used = await sut.db.pool.query(`SELECT count(*)::int AS n FROM identity.recovery_codes WHERE used_at IS NOT NULL`);
      expect(used.rows[0].n).toBe(1);
    });

    it('needs the CSRF header to complete a pending session', async () => {
      const pending = await signIn(sut, owner.email, owner.password);
      const answer = await sut.request('POST', '/api/v1/auth/totp', { headers: pending.headers(false), body: { code: recoveryCodes[1] } });
      expect(answer.status).toBe(403);
    });
  });
});
