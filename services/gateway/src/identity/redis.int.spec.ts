import { freePort } from '@packetagent/testing';
import { startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { viaRedis } from './redis';

describe(viaRedis.name, () => {
  let sut: GatewayTestApp;

  beforeAll(async () => {
    // Nothing listens on this port: Redis is down from the start.
    sut = await startGatewayTestApp({ gateway: { redisUrl: `redis://127.0.0.1:${await freePort()}` } });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('answers 503 problems, not 500, when Redis is unavailable', async () => {
    const login = await sut.request('POST', '/api/v1/auth/login', { body: { email: 'a@example.com', password: 'whatever it is' } });
    expect(login.status).toBe(503);
    expect(login.body).toMatchObject({ status: 503, code: 'unavailable' });

    const session = await sut.request('GET', '/api/v1/auth/me', { headers: { cookie: `pa_session=${'a'.repeat(43)}` } });
    expect(session.status).toBe(503);
    expect(session.body).toMatchObject({ code: 'unavailable', detail: 'the session store is unavailable' });
  });
});
