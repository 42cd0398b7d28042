import { completeSetup, insertUser, signIn, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { LoginThrottle } from './login-throttle';
import { currentTotp } from './totp';

describe(LoginThrottle.name, () => {
  let sut: GatewayTestApp;
  let owner: { email: string; password: string };
  const login = (email: string, password: string) => sut.request('POST', '/api/v1/auth/login', { body: { email, password } });

  beforeAll(async () => {
    // The default cookie setting (Secure) on purpose: this file also checks it.
    sut = await startGatewayTestApp({
      gateway: { cookieSecure: true, loginThrottle: { maxFailuresPerEmail: 3, maxFailuresPerIp: 6, maxFailuresPerUserTotp: 2, windowSeconds: 600 } },
    });
    owner = await completeSetup(sut);
  });

  afterAll(async () => {
    await sut.close();
  });

  it('sends the session cookie with Secure by default', async () => {
    const answer = await login(owner.email, owner.password);
    expect(answer.headers.getSetCookie().find((value) => value.startsWith('pa_session='))).toMatch(/; Secure/);
  });

  it('throttles second-factor codes per user', async () => {
    const session = await signIn(sut, owner.email, owner.password);
    const enrol = await sut.request<{ secret: string }>('POST', '/api/v1/auth/totp/enrol', { headers: session.headers() });
    const enabled = await sut.request('POST', '/api/v1/auth/totp/verify', { headers: session.headers(), body: { code: currentTotp(enrol.body.secret) } });
    expect(enabled.status).toBe(200);

    const pending = await signIn(sut, owner.email, owner.password);
    for (let attempt = 0; attempt < 2; attempt++) {
      expect((await sut.request('POST', '/api/v1/auth/totp', { headers: pending.headers(), body: { code: 'wrong-recovery-code' } })).status).toBe(401);
    }
    const right = currentTotp(enrol.body.secret, Date.now() + 30_000);
    const limited = await sut.request('POST', '/api/v1/auth/totp', { headers: pending.headers(), body: { code: right } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('answers 429 with Retry-After once an address used up its failures, even for the right password', async () => {
    await insertUser(sut, 'target@example.com', 'the right password');
    for (let attempt = 0; attempt < 3; attempt++) expect((await login('target@example.com', 'wrong password')).status).toBe(401);

    const limited = await login('target@example.com', 'the right password');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(limited.body).toMatchObject({ status: 429, code: 'rate_limited' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
  });

  it('counts an unknown address the same way, so the answers tell nothing about existence', async () => {
    for (let attempt = 0; attempt < 3; attempt++) expect((await login('ghost@example.com', 'wrong password')).status).toBe(401);
    expect((await login('ghost@example.com', 'wrong password')).status).toBe(429);
  });

  it('throttles a client address across e-mail addresses', async () => {
    // Six failures from this address so far (three per e-mail above): any e-mail is refused now.
    const answer = await login(owner.email, owner.password);
    expect(answer.status).toBe(429);
  });
});
