import { startSmtpServer, testCertificateAuthority, type TestCertificateAuthority, type TestSmtpServer } from '@packetagent/testing';
import { ToolRegistry } from '../../registry';
import { allowFor, contextFor } from '../../testing/tools.testkit';
import type { HostResolver } from '../../tool.types';

const PASSWORD = 'correct-horse-battery-staple';
const resolveHost: HostResolver = async (host) => (host === 'mail.test' ? [{ address: '127.0.0.1', family: 4 }] : []);

describe('email_send', () => {
  let authority: TestCertificateAuthority;
  let server: TestSmtpServer;
  let refusing: TestSmtpServer;

  beforeAll(async () => {
    authority = testCertificateAuthority(['mail.test']);
    [server, refusing] = await Promise.all([
      startSmtpServer({ certificate: authority.server, users: { agent: PASSWORD } }),
      startSmtpServer({ certificate: authority.server, tls: 'no-starttls', users: { agent: PASSWORD } }),
    ]);
  });

  afterAll(() => Promise.all([server.close(), refusing.close()]));

  beforeEach(() => {
    for (const smtp of [server, refusing]) {
      smtp.received.length = 0;
      smtp.logins.length = 0;
    }
  });

  const smtpCredential = (smtp: TestSmtpServer, overrides: Record<string, unknown> = {}) =>
    JSON.stringify({ host: 'mail.test', port: smtp.port, security: 'starttls', user: 'agent', password: PASSWORD, from: 'Release Bot <bot@example.com>', ca: authority.ca, ...overrides });

  const registryFor = (smtp: TestSmtpServer, allowPrivate = [`mail.test:${smtp.port}`]) => new ToolRegistry({ config: { httpAllowPrivate: allowPrivate }, resolveHost });

  async function send(registry: ToolRegistry, credential: string | null, args: Record<string, unknown> = {}) {
    const planned = registry.plan('call', 'email_send', { to: 'Ops@Example.com', subject: 'Release 1.2', body: 'Release 1.2 is out.\nNotes: see the tracker.', ...(credential === null ? {} : { credential: 'smtp_main' }), ...args });
    return registry.execute(planned, allowFor(planned), contextFor({ credentials: credential === null ? {} : { smtp_main: credential } }));
  }

  it('sends the message from the configured sender to the granted recipient over TLS', async () => {
    const outcome = await send(registryFor(server), smtpCredential(server));

    expect(outcome).toMatchObject({ ok: true, output: { to: 'ops@example.com', sent: true }, summary: 'sent "Release 1.2" to ops@example.com' });
    expect(server.logins).toEqual([{ user: 'agent', secure: true, accepted: true }]);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({
      from: 'bot@example.com',
      to: ['ops@example.com'],
      secure: true,
      user: 'agent',
      subject: 'Release 1.2',
      text: 'Release 1.2 is out.\nNotes: see the tracker.',
    });
    expect(server.received[0]!.headers).toMatchObject({ from: 'Release Bot <bot@example.com>', to: 'ops@example.com' });
  });

  it('stops with smtp_tls_required when the server will not start TLS, sending nothing in clear', async () => {
    const outcome = await send(registryFor(refusing), smtpCredential(refusing));

    expect(outcome).toMatchObject({ ok: false, error: { code: 'smtp_tls_required' } });
    expect(refusing.connections()).toBeGreaterThan(0);
    expect(refusing.logins).toHaveLength(0);
    expect(refusing.received).toHaveLength(0);
  });

  it('answers smtp_auth_failed for a wrong password without quoting it', async () => {
    const outcome = await send(registryFor(server), smtpCredential(server, { password: 'wrong-password-123' }));

    expect(outcome).toMatchObject({ ok: false, error: { code: 'smtp_auth_failed', message: expect.stringContaining('refused the login') } });
    expect(JSON.stringify(outcome)).not.toContain('wrong-password-123');
    expect(server.logins).toEqual([{ user: 'agent', secure: true, accepted: false }]);
    expect(server.received).toHaveLength(0);
  });

  it('refuses a private mail server that is not allowlisted before connecting', async () => {
    const before = server.connections();

    const outcome = await send(registryFor(server, []), smtpCredential(server));

    expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed', message: expect.stringContaining('loopback') } });
    expect(server.connections()).toBe(before);
  });

  it('asks for the SMTP credential when the call names none', async () => {
    const before = server.connections();

    const outcome = await send(registryFor(server), null);

    expect(outcome).toMatchObject({ ok: false, error: { code: 'credential_required', message: expect.stringContaining('grant of email_send must list it') } });
    expect(server.connections()).toBe(before);
  });

  it('refuses a credential that is not the SMTP configuration without quoting it', async () => {
    const plaintext = await send(registryFor(server), smtpCredential(server, { security: 'none' }));
    const broken = await send(registryFor(server), `{"host": "mail.test", "password": "${PASSWORD}"`);

    expect(plaintext).toMatchObject({ ok: false, error: { code: 'smtp_config_invalid', message: expect.stringContaining('security') } });
    expect(broken).toMatchObject({ ok: false, error: { code: 'smtp_config_invalid', message: expect.stringContaining('is not JSON') } });
    expect(JSON.stringify([plaintext, broken])).not.toContain(PASSWORD);
  });
});
