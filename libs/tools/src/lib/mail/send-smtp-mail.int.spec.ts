import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startSmtpServer, testCertificateAuthority, type TestCertificateAuthority, type TestSmtpServer } from '@packetagent/testing';
import type { HostResolver } from '../tool.types';
import { sendSmtpMail, type SmtpSendRequest } from './send-smtp-mail';
import type { SmtpConfig } from './smtp-config';
import { SmtpError } from './smtp-error';

/** `mail.test` and `other.test` are the loopback address; nothing else resolves. */
const resolveHost: HostResolver = async (host) => (host === 'mail.test' || host === 'other.test' ? [{ address: '127.0.0.1', family: 4 }] : []);

async function failureOf(promise: Promise<unknown>): Promise<SmtpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SmtpError) return error;
    throw error;
  }
  throw new Error('expected the send to fail');
}

describe(sendSmtpMail.name, () => {
  let authority: TestCertificateAuthority;
  let starttls: TestSmtpServer;
  let implicit: TestSmtpServer;

  beforeAll(async () => {
    authority = testCertificateAuthority(['mail.test', '127.0.0.1']);
    [starttls, implicit] = await Promise.all([
      startSmtpServer({ certificate: authority.server, rejectRecipient: (to) => (to.startsWith('full@') ? { code: 452, message: 'mailbox full' } : to.startsWith('gone@') ? { code: 550, message: 'no such user' } : null) }),
      startSmtpServer({ certificate: authority.server, tls: 'implicit' }),
    ]);
  });

  afterAll(() => Promise.all([starttls.close(), implicit.close()]));

  beforeEach(() => {
    starttls.received.length = 0;
    implicit.received.length = 0;
  });

  const config = (server: TestSmtpServer, overrides: Partial<SmtpConfig> = {}): SmtpConfig => ({
    host: 'mail.test',
    port: server.port,
    security: server === implicit ? 'tls' : 'starttls',
    from: 'PacketAgent <agent@example.com>',
    ca: authority.ca,
    ...overrides,
  });

  const request = (smtp: SmtpConfig, overrides: Partial<SmtpSendRequest> = {}): SmtpSendRequest => ({
    config: smtp,
    message: { to: 'ops@example.com', subject: 'Hello', text: 'Body' },
    allowPrivate: [`${smtp.host}:${smtp.port}`],
    timeoutMs: 5_000,
    resolveHost,
    ...overrides,
  });

  it('sends over STARTTLS to the checked address, with the host name as the TLS server name', async () => {
    const sent = await sendSmtpMail(
      request(config(starttls), { message: { to: 'ops@example.com', subject: 'Hello', text: 'Body', messageId: 'd-1@packetagent', headers: { 'X-PacketAgent-Delivery': 'd-1' } } }),
    );

    expect(sent).toMatchObject({ messageId: 'd-1@packetagent', connectedAddress: '127.0.0.1' });
    expect(sent.response).toMatch(/^250 /);
    expect(starttls.received).toHaveLength(1);
    expect(starttls.received[0]).toMatchObject({ from: 'agent@example.com', to: ['ops@example.com'], secure: true, servername: 'mail.test', subject: 'Hello', text: 'Body' });
    expect(starttls.received[0]!.headers).toMatchObject({ 'message-id': '<d-1@packetagent>', 'x-packetagent-delivery': 'd-1' });
  });

  it('sends with TLS from the first byte', async () => {
    await sendSmtpMail(request(config(implicit)));

    expect(implicit.received).toHaveLength(1);
    expect(implicit.received[0]).toMatchObject({ secure: true, servername: 'mail.test' });
  });

  it('checks the certificate against an IP address when the host is one', async () => {
    await sendSmtpMail(request(config(starttls, { host: '127.0.0.1' })));

    expect(starttls.received[0]).toMatchObject({ secure: true, servername: null });
  });

  it('refuses a certificate from a CA it was not told to trust', async () => {
    const { ca: _trusted, ...untrusting } = config(starttls);

    const error = await failureOf(sendSmtpMail(request(untrusting)));

    expect(error).toMatchObject({ code: 'smtp_tls_failed', retryable: false });
    expect(starttls.received).toHaveLength(0);
  });

  it('refuses a certificate issued for another name', async () => {
    const error = await failureOf(sendSmtpMail(request(config(starttls, { host: 'other.test' }))));

    expect(error).toMatchObject({ code: 'smtp_tls_failed' });
    expect(starttls.received).toHaveLength(0);
  });

  it('fails the handshake when implicit TLS meets a plaintext greeting', async () => {
    const error = await failureOf(sendSmtpMail(request(config(starttls, { security: 'tls' }))));

    expect(error).toMatchObject({ code: 'smtp_tls_failed', retryable: false });
  });

  it('reports a refused recipient with its reply code, retryable for a 4xx only', async () => {
    const permanent = await failureOf(sendSmtpMail(request(config(starttls), { message: { to: 'gone@example.com', subject: 's', text: 't' } })));
    const transient = await failureOf(sendSmtpMail(request(config(starttls), { message: { to: 'full@example.com', subject: 's', text: 't' } })));

    expect(permanent).toMatchObject({ code: 'smtp_rejected', smtpCode: 550, retryable: false });
    expect(permanent.message).toContain('no such user');
    expect(transient).toMatchObject({ code: 'smtp_rejected', smtpCode: 452, retryable: true });
  });

  it('refuses a private address that is not allowlisted before connecting', async () => {
    const before = starttls.connections();

    const error = await failureOf(sendSmtpMail(request(config(starttls), { allowPrivate: [] })));

    expect(error).toMatchObject({ code: 'destination_not_allowed', retryable: false });
    expect(error.message).toContain('127.0.0.1');
    expect(starttls.connections()).toBe(before);
  });

  it.each(['ops@example.com, audit@example.com', 'Ops <audit@example.com>'])('refuses %s as a recipient before connecting', async (to) => {
    const before = starttls.connections();

    const error = await failureOf(sendSmtpMail(request(config(starttls), { message: { to, subject: 's', text: 't' } })));

    expect(error).toMatchObject({ code: 'recipient_invalid', retryable: false });
    expect(starttls.connections()).toBe(before);
  });

  it('reports a host that does not resolve', async () => {
    const error = await failureOf(sendSmtpMail(request(config(starttls, { host: 'nowhere.test' }))));

    expect(error).toMatchObject({ code: 'dns_failed', retryable: true });
  });

  describe('against a server that never greets', () => {
    let silent: Server;
    let port: number;
    const sockets = new Set<Socket>();

    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      port = (silent.address() as AddressInfo).port;
    });

    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it('times out within the bound', async () => {
      const error = await failureOf(sendSmtpMail(request(config(starttls, { port }), { timeoutMs: 300 })));

      expect(error).toMatchObject({ code: 'timeout', retryable: true });
    });

    it('stops when the caller aborts', async () => {
      const controller = new AbortController();
      const sending = failureOf(sendSmtpMail(request(config(starttls, { port }), { signal: controller.signal })));
      controller.abort(new Error('run cancelled'));

      await expect(sending).resolves.toMatchObject({ code: 'aborted' });
    });
  });
});
