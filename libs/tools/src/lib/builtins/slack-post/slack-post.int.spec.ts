import { ToolRegistry } from '../../registry';
import { allowFor, contextFor, localServer, type LocalServer } from '../../testing/tools.testkit';

const WEBHOOK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX';

describe('slack_post', () => {
  let slack: LocalServer;

  beforeAll(async () => {
    slack = await localServer((request, response) => {
      if (request.url.endsWith('/B404/gone')) response.writeHead(404, { 'content-type': 'text/plain' }).end('channel_not_found');
      else response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });

  afterAll(() => slack.close());

  beforeEach(() => {
    slack.received.length = 0;
  });

  const sut = () => new ToolRegistry({ config: { slackWebhookBaseUrl: slack.origin } });

  it('posts the text to the webhook path held in the credential', async () => {
    const registry = sut();
    const planned = registry.plan('call', 'slack_post', { channel: '#Deploys', text: 'Release 1.2 is out', credential: 'slack_deploys' });

    const outcome = await registry.execute(planned, allowFor(planned), contextFor({ credentials: { slack_deploys: WEBHOOK } }));

    expect(outcome).toEqual({ ok: true, output: { channel: '#deploys', posted: true }, summary: 'posted 18 characters to #deploys' });
    expect(slack.received).toHaveLength(1);
    expect(slack.received[0]).toMatchObject({ method: 'POST', url: '/services/T000/B000/XXXXSECRETXXXX', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(JSON.parse(slack.received[0]!.body)).toEqual({ channel: '#deploys', text: 'Release 1.2 is out' });
    expect(slack.received[0]!.headers).not.toHaveProperty('idempotency-key');
  });

  it('reports Slack\'s refusal without quoting the webhook URL', async () => {
    const registry = sut();
    const secret = 'https://hooks.slack.com/services/T000/B404/gone';
    const planned = registry.plan('call', 'slack_post', { channel: '#gone', text: 'hello', credential: 'slack_gone' });

    const outcome = await registry.execute(planned, allowFor(planned), contextFor({ credentials: { slack_gone: secret } }));

    expect(outcome).toMatchObject({ ok: false, error: { code: 'slack_error', message: 'Slack refused the message (404: channel_not_found)' } });
    expect(JSON.stringify(outcome)).not.toContain('B404');
  });

  it('refuses a credential that is not a Slack webhook URL when no base is configured', async () => {
    const registry = new ToolRegistry();
    const planned = registry.plan('call', 'slack_post', { channel: '#ops', text: 'hello', credential: 'slack_ops' });

    const outcome = await registry.execute(planned, allowFor(planned), contextFor({ credentials: { slack_ops: `${slack.origin}/services/x` } }));

    expect(outcome).toMatchObject({ ok: false, error: { code: 'credential_invalid' } });
    expect(slack.received).toHaveLength(0);
  });
});
