import type { HostResolver } from '@packetagent/tools';
import type { ChannelDelivery } from '../channel';
import { channelDelivery, outboundMessage, startSmtpServer, testCertificateAuthority, type TestCertificateAuthority, type TestSmtpServer } from '../testing';
import { EmailChannel } from './email.channel';

const PASSWORD = 'mail-password-0001';
const resolveHost: HostResolver = async (host) => (host === 'mail.test' ? [{ address: '127.0.0.1', family: 4 }] : []);

describe(EmailChannel.name, () => {
  let authority: TestCertificateAuthority;
  let server: TestSmtpServer;
  let refusing: TestSmtpServer;
  const sut = new EmailChannel({ resolveHost });

  beforeAll(async () => {
    authority = testCertificateAuthority(['mail.test']);
    [server, refusing] = await Promise.all([
      startSmtpServer({
        certificate: authority.server,
        users: { notifier: PASSWORD },
        rejectRecipient: (to) => (to === 'busy@example.com' ? { code: 451, message: 'try later' } : to === 'nobody@example.com' ? { code: 550, message: 'no such user' } : null),
      }),
      startSmtpServer({ certificate: authority.server, tls: 'no-starttls' }),
    ]);
  });

  afterAll(() => Promise.all([server.close(), refusing.close()]));

  beforeEach(() => {
    server.received.length = 0;
    refusing.received.length = 0;
  });

  const credential = (smtp: TestSmtpServer, overrides: Record<string, unknown> = {}) =>
    JSON.stringify({ host: 'mail.test', port: smtp.port, security: 'starttls', user: 'notifier', password: PASSWORD, from: 'PacketAgent <notify@example.com>', ca: authority.ca, ...overrides });

  const delivery = (smtp: TestSmtpServer, overrides: Partial<ChannelDelivery> = {}): ChannelDelivery =>
    channelDelivery({ channel: 'email', to: 'owner@example.com' }, { credential: credential(smtp), allowPrivate: [`mail.test:${smtp.port}`], ...overrides });

  it('sends the title as subject, the facts, one link per action and the console link, over TLS', async () => {
    const outcome = await sut.send(delivery(server));

    expect(outcome).toEqual({ ok: true, status: null, threadRef: '<dlv-0001.delivery@example.com>' });
    expect(server.received).toHaveLength(1);
    const mail = server.received[0]!;
    expect(mail).toMatchObject({ from: 'notify@example.com', to: ['owner@example.com'], secure: true, user: 'notifier', subject: 'release-bot asks to POST https://api.example.com/deploy' });
    expect(mail.headers).toMatchObject({ 'message-id': '<dlv-0001.delivery@example.com>', 'x-packetagent-delivery': 'dlv-0001', 'auto-submitted': 'auto-generated' });
    expect(mail.text).toContain('Tool: http_fetch\nResource: https://api.example.com/deploy');
    expect(mail.text).toContain('  Approve: https://console.example.com/r/cb-approve?t=token-a (expires 2025-06-01 14:00 UTC)');
    expect(mail.text).toContain('  Reject: https://console.example.com/r/cb-reject?t=token-b (expires 2025-06-01 14:00 UTC)');
    expect(mail.text).toContain('Open in the console: https://console.example.com/runs/run-42');
    expect(mail.text).toContain('worker release-bot · run run-42 (waiting)');
    expect(mail.html).toContain('<a href="https://console.example.com/r/cb-approve?t=token-a">Approve</a> <span style="color:#59636e">(expires 2025-06-01 14:00 UTC)</span>');
    expect(mail.html).toContain('<a href="https://console.example.com/runs/run-42">Open in the console</a>');
  });

  it('keeps the same Message-ID on every attempt of a delivery', async () => {
    await sut.send(delivery(server));
    await sut.send(delivery(server));

    expect(server.received.map((mail) => mail.headers['message-id'])).toEqual(['<dlv-0001.delivery@example.com>', '<dlv-0001.delivery@example.com>']);
  });

  it('escapes what the message says in the HTML part', async () => {
    const message = outboundMessage({ title: 'Run <b>42</b> & more', text: 'Output: <script>alert("x")</script>' });

    await sut.send(delivery(server, { message, actions: [{ action: 'open', label: '<img src=x>', url: 'https://console.example.com/r/x?a=1&b="2"', expiresAt: '2025-06-01T14:00:00.000Z' }] }));

    const html = server.received[0]!.html!;
    expect(html).toContain('Run &#60;b&#62;42&#60;/b&#62; &#38; more');
    expect(html).toContain('Output: &#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;');
    expect(html).toContain('<a href="https://console.example.com/r/x?a=1&#38;b=&#34;2&#34;">&#60;img src=x&#62;</a>');
    expect(html).not.toMatch(/<script|<img|<b>/);
    expect(server.received[0]!.subject).toBe('Run <b>42</b> & more');
  });

  it('refers to the run\'s earlier message when there is one', async () => {
    await sut.send(delivery(server, { thread: { ref: '<dlv-0000.delivery@example.com>' } }));

    expect(server.received[0]!.headers).toMatchObject({ 'in-reply-to': '<dlv-0000.delivery@example.com>', references: '<dlv-0000.delivery@example.com>' });
  });

  it('retries a 4xx refusal and gives up on a 5xx one', async () => {
    const busy = await sut.send(channelDelivery({ channel: 'email', to: 'busy@example.com' }, { credential: credential(server), allowPrivate: [`mail.test:${server.port}`] }));
    const gone = await sut.send(channelDelivery({ channel: 'email', to: 'nobody@example.com' }, { credential: credential(server), allowPrivate: [`mail.test:${server.port}`] }));

    expect(busy).toMatchObject({ ok: false, retryable: true, status: null, code: 'smtp_rejected', message: expect.stringContaining('451') });
    expect(gone).toMatchObject({ ok: false, retryable: false, status: null, code: 'smtp_rejected', message: expect.stringContaining('550') });
  });

  it('gives up on a refused login without quoting the password', async () => {
    const outcome = await sut.send(delivery(server, { credential: credential(server, { password: 'not-the-password' }) }));

    expect(outcome).toMatchObject({ ok: false, retryable: false, code: 'smtp_auth_failed' });
    expect(JSON.stringify(outcome)).not.toContain('not-the-password');
  });

  it('gives up when the server will not start TLS, sending nothing', async () => {
    const outcome = await sut.send(delivery(refusing, { credential: credential(refusing, { user: undefined, password: undefined }) }));

    expect(outcome).toMatchObject({ ok: false, retryable: false, code: 'smtp_tls_required' });
    expect(refusing.received).toHaveLength(0);
  });

  it('retries when the server cannot be reached', async () => {
    const closed = await startSmtpServer({ certificate: authority.server });
    const port = closed.port;
    await closed.close();

    const outcome = await sut.send(channelDelivery({ channel: 'email', to: 'owner@example.com' }, { credential: credential(server, { port }), allowPrivate: [`mail.test:${port}`] }));

    expect(outcome).toMatchObject({ ok: false, retryable: true, code: 'connection_failed' });
  });

  it('refuses a private server the operator did not allow, before connecting', async () => {
    const before = server.connections();

    const outcome = await sut.send(delivery(server, { allowPrivate: [] }));

    expect(outcome).toMatchObject({ ok: false, retryable: false, code: 'destination_not_allowed' });
    expect(server.connections()).toBe(before);
  });

  it('gives up on a route without a credential or with one that is not the SMTP configuration', async () => {
    const none = await sut.send(delivery(server, { credential: null }));
    const plaintext = await sut.send(delivery(server, { credential: credential(server, { security: 'plain' }) }));

    expect(none).toMatchObject({ ok: false, retryable: false, code: 'credential_required' });
    expect(plaintext).toMatchObject({ ok: false, retryable: false, code: 'smtp_config_invalid' });
    expect(JSON.stringify(plaintext)).not.toContain(PASSWORD);
  });
});
