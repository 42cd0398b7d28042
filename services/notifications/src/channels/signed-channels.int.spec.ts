import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { testCertificateAuthority } from '@packetagent/testing';
import { Webhook } from 'standardwebhooks';
import { PacketChatChannel, packetChatMessageKey } from './packetchat/packetchat.channel';
import { PacketPhoneChannel } from './packetphone/packetphone.channel';
import { channelDelivery, outboundMessage } from './testing';
import { WebhookChannel } from './webhook/webhook.channel';

interface Received {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const ca = testCertificateAuthority(['localhost', '127.0.0.1']);

function recorder(received: Received[], status: () => number) {
  return (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers as Record<string, string>, body });
      res.writeHead(status(), { 'content-type': 'application/json' }).end('{}');
    });
  };
}

const listen = (server: Server | HttpServer) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('signed HTTP channels', () => {
  const received: Received[] = [];
  let status = 200;
  let https: Server;
  let http: HttpServer;
  let httpsPort: number;
  let httpPort: number;

  beforeAll(async () => {
    https = createHttpsServer({ key: ca.server.key, cert: ca.server.cert }, recorder(received, () => status));
    http = createHttpServer(recorder(received, () => status));
    httpsPort = await listen(https);
    httpPort = await listen(http);
  });
  afterAll(async () => {
    https.closeAllConnections();
    http.closeAllConnections();
    await new Promise((resolve) => https.close(resolve));
    await new Promise((resolve) => http.close(resolve));
  });
  beforeEach(() => {
    received.length = 0;
    status = 200;
  });

  const verify = (request: Received) => new Webhook(secret).verify(request.body, request.headers) as Record<string, unknown>;

  it('PacketPhone: pushes over HTTPS with the controls, signed, and refuses plain http even on loopback', async () => {
    const credential = JSON.stringify({ url: `https://localhost:${httpsPort}/`, secret, ca: ca.ca });
    const delivery = channelDelivery({ channel: 'packetphone', to: 'oncall-7' }, { credential, allowPrivate: [`localhost:${httpsPort}`] });
    await expect(new PacketPhoneChannel().send(delivery)).resolves.toEqual({ ok: true, status: 200 });
    expect(received[0]).toMatchObject({ method: 'POST', url: '/v1/notifications' });
    const body = verify(received[0]!);
    expect(body).toMatchObject({ deliveryId: 'dlv-0001', recipient: 'oncall-7', priority: 'high', kind: 'attention' });
    expect((body['controls'] as Array<{ action: string }>).map((control) => control.action)).toEqual(['approve', 'reject']);
    expect(received[0]!.headers['webhook-id']).toBe('dlv-0001');

    const plain = channelDelivery({ channel: 'packetphone', to: 'oncall-7' }, { credential: JSON.stringify({ url: `http://127.0.0.1:${httpPort}/`, secret }), allowPrivate: [`127.0.0.1:${httpPort}`] });
    await expect(new PacketPhoneChannel().send(plain)).resolves.toMatchObject({ ok: false, retryable: false, code: 'credential_invalid', message: expect.stringContaining('https') });
    expect(received).toHaveLength(1);
  });

  it('PacketPhone: refuses a server whose certificate the configured CA did not sign', async () => {
    const other = testCertificateAuthority(['localhost']);
    const credential = JSON.stringify({ url: `https://localhost:${httpsPort}/`, secret, ca: other.ca });
    const outcome = await new PacketPhoneChannel().send(channelDelivery({ channel: 'packetphone', to: 'oncall-7' }, { credential, allowPrivate: [`localhost:${httpsPort}`] }));
    expect(outcome).toMatchObject({ ok: false, retryable: true, code: 'connection_failed' });
    expect(received).toEqual([]);
  });

  it('PacketChat: writes a run\'s progress and outcome as one replaceable card, attention cards apart, with read-only links', async () => {
    const credential = JSON.stringify({ url: `http://127.0.0.1:${httpPort}/chat`, secret });
    const send = (trigger: 'progress' | 'succeeded' | 'attention') =>
      new PacketChatChannel().send(
        channelDelivery(
          { channel: 'packetchat', to: 'releases' },
          {
            credential,
            allowPrivate: [`127.0.0.1:${httpPort}`],
            message: outboundMessage({ trigger, attention: trigger === 'attention' ? outboundMessage().attention : null }),
            actions: [{ action: 'open', label: 'Open', url: 'https://pa.example.com/api/v1/callbacks/x', expiresAt: '2025-06-01T14:00:00.000Z' }, ...(trigger === 'attention' ? [{ action: 'approve' as const, label: 'Approve', url: 'https://pa.example.com/a', expiresAt: '2025-06-01T14:00:00.000Z' }] : [])],
          },
        ),
      );
    await expect(send('progress')).resolves.toEqual({ ok: true, status: 200, threadRef: 'run-run-42' });
    await expect(send('succeeded')).resolves.toMatchObject({ ok: true });
    await expect(send('attention')).resolves.toMatchObject({ ok: true, threadRef: 'attention-att-7-attention' });
    expect(received.map((request) => `${request.method} ${request.url}`)).toEqual([
      'PUT /chat/threads/releases/messages/run-run-42',
      'PUT /chat/threads/releases/messages/run-run-42',
      'PUT /chat/threads/releases/messages/attention-att-7-attention',
    ]);
    const card = verify(received[2]!);
    expect((card['links'] as Array<{ action: string }>).map((link) => link.action)).toEqual(['open']);
    expect(packetChatMessageKey(channelDelivery({ channel: 'packetchat' }, { message: outboundMessage({ trigger: 'budget_warning', attention: null }) }))).toBe('delivery-dlv-0001');
  });

  it('webhook: a 4xx other than 408/429 is final, a 5xx is retried, and errors never quote the URL', async () => {
    const credential = JSON.stringify({ url: `http://127.0.0.1:${httpPort}/hook`, secret });
    const delivery = channelDelivery({ channel: 'webhook' }, { credential, allowPrivate: [`127.0.0.1:${httpPort}`] });
    status = 410;
    await expect(new WebhookChannel().send(delivery)).resolves.toMatchObject({ ok: false, retryable: false, code: 'http_410' });
    status = 503;
    await expect(new WebhookChannel().send(delivery)).resolves.toMatchObject({ ok: false, retryable: true, code: 'http_503' });
    await expect(new WebhookChannel().send(channelDelivery({ channel: 'webhook' }, { credential, allowPrivate: [] }))).resolves.toMatchObject({ ok: false, retryable: false, code: 'destination_not_allowed' });
    await expect(new WebhookChannel().send(channelDelivery({ channel: 'webhook' }, { credential: '{"url":"x"}' }))).resolves.toMatchObject({ ok: false, code: 'credential_invalid' });
    const outcome = await new WebhookChannel().send(channelDelivery({ channel: 'webhook' }, { credential: JSON.stringify({ url: 'http://127.0.0.1:1/secret-path-token', secret }), allowPrivate: ['127.0.0.1:1'] }));
    expect(outcome).toMatchObject({ ok: false, retryable: true, code: 'connection_failed' });
    expect(JSON.stringify(outcome)).not.toContain('secret-path-token');
  });
});
