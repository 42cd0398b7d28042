import { existsSync, readFileSync, statSync } from 'node:fs';
import { startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { setupTokenPath } from './setup-token.issuer';
import { SetupController } from './setup.controller';

const OWNER = { email: 'Owner@Example.com', password: 'correct horse battery', workspace: 'Acme' };

describe(SetupController.name, () => {
  let sut: GatewayTestApp;

  beforeAll(async () => {
    sut = await startGatewayTestApp();
  });

  afterAll(async () => {
    await sut.close();
  });

  it('writes a random setup token to <dataDir>/setup-token with mode 0600 and logs the path, never the token', () => {
    const path = setupTokenPath({ dataDir: sut.dataDir });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const token = readFileSync(path, 'utf8').trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sut.logger.text()).toContain(path);
    expect(sut.logger.text()).not.toContain(token);
  });

  it('refuses a wrong token with a 403 problem and keeps setup open', async () => {
    const answer = await sut.request('POST', '/api/v1/setup', { body: { ...OWNER, token: 'not-the-token' } });
    expect(answer.status).toBe(403);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body).toMatchObject({ status: 403, code: 'invalid_setup_token' });
    expect(existsSync(setupTokenPath({ dataDir: sut.dataDir }))).toBe(true);
  });

  it('refuses a password shorter than 12 characters with the path of the issue', async () => {
    const token = readFileSync(setupTokenPath({ dataDir: sut.dataDir }), 'utf8').trim();
    const answer = await sut.request('POST', '/api/v1/setup', { body: { ...OWNER, token, password: 'short' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'password', message: expect.stringContaining('12') }] });
  });

  it('creates the owner, workspace and owner key once, consumes the token and deletes its file', async () => {
    const path = setupTokenPath({ dataDir: sut.dataDir });
    const token = readFileSync(path, 'utf8').trim();

    const answer = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', { body: { ...OWNER, token } });

    expect(answer.status).toBe(201);
    expect(answer.body.workspaceId).toMatch(/^ws_[a-f0-9]{20}$/);
    expect(answer.body.apiKey).toMatch(/^pa_[a-f0-9]{20}_[A-Za-z0-9_-]{43}$/);
    expect(existsSync(path)).toBe(false);

    const me = await sut.request('GET', '/api/v1/auth/me', { headers: { authorization: `Bearer ${answer.body.apiKey}` } });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ kind: 'api_key', workspaces: [{ id: answer.body.workspaceId, name: 'Acme', role: 'owner' }] });

    const users = await sut.db.pool.query(`SELECT email, password_hash FROM identity.users`);
    expect(users.rows).toEqual([{ email: 'owner@example.com', password_hash: expect.stringMatching(/^\$argon2id\$/) }]);

    const events = await sut.db.pool.query(`SELECT type, data, metadata FROM events WHERE stream_id = $1 ORDER BY stream_version`, [
      `workspace-${answer.body.workspaceId}`,
    ]);
    expect(events.rows.map((row) => row.type)).toEqual(['workspace.created', 'member.added', 'api_key.created', 'setup.completed']);
    const stored = JSON.stringify(events.rows);
    const secret = answer.body.apiKey.split('_').slice(2).join('_');
    for (const forbidden of [token, secret, OWNER.password, 'owner@example.com', 'hash']) expect(stored).not.toContain(forbidden);

    const again = await sut.request('POST', '/api/v1/setup', { body: { ...OWNER, email: 'second@example.com', token } });
    expect(again.status).toBe(410);
    expect(again.body).toMatchObject({ code: 'setup_completed' });
  });

  it('writes no token on a later boot once an owner exists', async () => {
    await sut.restart();
    expect(existsSync(setupTokenPath({ dataDir: sut.dataDir }))).toBe(false);
  });
});

describe(`${SetupController.name} with a configured token`, () => {
  let sut: GatewayTestApp;
  const setupToken = 'operator-chosen-token-123';

  beforeAll(async () => {
    sut = await startGatewayTestApp({ gateway: { setupToken } });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('writes no file, stores only the hash and accepts the configured token', async () => {
    expect(existsSync(setupTokenPath({ dataDir: sut.dataDir }))).toBe(false);
    const stored = await sut.db.pool.query(`SELECT encode(token_hash, 'hex') AS hash FROM identity.setup`);
    expect(stored.rows[0].hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.rows[0].hash).not.toContain(Buffer.from(setupToken).toString('hex'));

    const answer = await sut.request('POST', '/api/v1/setup', { body: { ...OWNER, token: setupToken } });
    expect(answer.status).toBe(201);
  });
});
