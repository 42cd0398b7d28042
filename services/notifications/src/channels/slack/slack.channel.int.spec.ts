import type { ChannelDelivery } from '../channel';
import { channelDelivery, outboundMessage, startSlackApi, type TestSlackApi } from '../testing';
import { SlackChannel } from './slack.channel';

const NOW = new Date('2025-06-01T12:00:00.000Z');

describe(SlackChannel.name, () => {
  let slack: TestSlackApi;
  const sut = new SlackChannel({ clock: () => NOW });

  beforeAll(async () => {
    slack = await startSlackApi({ channels: { '#ops': 'C0OPS', '#deploys': 'C0DEPLOYS' } });
  });

  afterAll(() => slack.close());

  beforeEach(() => slack.reset());

  const bot = (overrides: Record<string, unknown> = {}) => JSON.stringify({ botToken: slack.token, apiBaseUrl: slack.apiBaseUrl, ...overrides });
  const delivery = (overrides: Partial<ChannelDelivery> = {}): ChannelDelivery =>
    channelDelivery({ channel: 'slack', to: '#ops' }, { credential: bot(), allowPrivate: [slack.hostPort], ...overrides });
  const progress = (text: string, thread: string | null): ChannelDelivery =>
    delivery({ message: outboundMessage({ trigger: 'progress', title: 'release-bot is working', text, attention: null }), actions: [], thread: thread ? { ref: thread } : null });

  describe('with an incoming webhook', () => {
    it('posts the text with one link per action and the console link', async () => {
      const outcome = await sut.send(delivery({ credential: slack.webhookUrl() }));

      expect(outcome).toEqual({ ok: true, status: 200 });
      expect(slack.calls).toHaveLength(1);
      expect(slack.calls[0]).toMatchObject({ method: 'webhook', path: '/services/T000/B000/XXXXSECRETXXXX', authorization: null, contentType: 'application/json; charset=utf-8' });
      expect(slack.calls[0]!.body['text']).toBe(
        [
          '*release-bot asks to POST https://api.example.com/deploy*',
          'Tool: http_fetch\nResource: https://api.example.com/deploy\nDecide by 2025-06-01 14:00 UTC',
          '<https://console.example.com/r/cb-approve?t=token-a|Approve> (expires 2025-06-01 14:00 UTC)',
          '<https://console.example.com/r/cb-reject?t=token-b|Reject> (expires 2025-06-01 14:00 UTC)',
          '<https://console.example.com/runs/run-42|Open in the console> · worker release-bot · run run-42 (waiting)',
        ].join('\n'),
      );
    });

    it('gives up on a webhook Slack no longer knows, without quoting its URL', async () => {
      slack.failNext({ status: 404, body: 'no_service' });

      const outcome = await sut.send(delivery({ credential: slack.webhookUrl('GONE0000SECRET') }));

      expect(outcome).toEqual({ ok: false, retryable: false, status: 404, code: 'slack_no_service', message: 'the Slack webhook answered 404 no_service' });
      expect(JSON.stringify(outcome)).not.toContain('GONE0000SECRET');
    });
  });

  describe('with a bot token', () => {
    it('posts Block Kit with the bearer token and answers the message as the thread ref', async () => {
      const outcome = await sut.send(delivery());

      expect(outcome).toEqual({ ok: true, status: 200, threadRef: `C0OPS:${slack.messages[0]!.ts}` });
      expect(slack.calls).toHaveLength(1);
      expect(slack.calls[0]).toMatchObject({ method: 'chat.postMessage', authorization: `Bearer ${slack.token}`, body: { channel: '#ops', unfurl_links: false } });
      expect(slack.calls[0]!.body['text']).toContain('*release-bot asks to POST https://api.example.com/deploy*');
      expect(slack.messages[0]!.blocks).toEqual([
        { type: 'header', text: { type: 'plain_text', text: 'release-bot asks to POST https://api.example.com/deploy', emoji: false } },
        { type: 'section', text: { type: 'mrkdwn', text: 'Tool: http_fetch\nResource: https://api.example.com/deploy\nDecide by 2025-06-01 14:00 UTC' } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'worker release-bot · run run-42 (waiting) · <https://console.example.com/runs/run-42|Open in the console>' }] },
        {
          type: 'actions',
          elements: [
            { type: 'button', action_id: 'packetagent-0-approve', text: { type: 'plain_text', text: 'Approve (expires 2025-06-01 14:00 UTC)', emoji: false }, url: 'https://console.example.com/r/cb-approve?t=token-a', style: 'primary' },
            { type: 'button', action_id: 'packetagent-1-reject', text: { type: 'plain_text', text: 'Reject (expires 2025-06-01 14:00 UTC)', emoji: false }, url: 'https://console.example.com/r/cb-reject?t=token-b', style: 'danger' },
          ],
        },
      ]);
    });

    it('escapes what the message says', async () => {
      await sut.send(delivery({ message: outboundMessage({ text: 'Output: <!channel> & <https://evil.example|click>' }), actions: [] }));

      const section = slack.messages[0]!.blocks![1] as { text: { text: string } };
      expect(section.text.text).toBe('Output: &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
      expect(slack.messages[0]!.blocks!.map((block) => (block as { type: string }).type)).toEqual(['header', 'section', 'context']);
    });

    it('edits a run\'s progress message in place, through to its end', async () => {
      const first = await sut.send(progress('Step 1 of 3', null));
      const ref = first.ok ? first.threadRef! : '';
      const second = await sut.send(progress('Step 2 of 3', ref));
      const end = await sut.send(delivery({ message: outboundMessage({ trigger: 'succeeded', title: 'release-bot finished', text: 'All 3 steps done', attention: null }), actions: [], thread: { ref } }));

      expect(ref).toMatch(/^C0OPS:\d+\.\d+$/);
      expect(second).toEqual({ ok: true, status: 200, threadRef: ref });
      expect(end).toEqual({ ok: true, status: 200, threadRef: ref });
      expect(slack.calls.map((call) => call.method)).toEqual(['chat.postMessage', 'chat.update', 'chat.update']);
      expect(slack.calls[1]!.body).toMatchObject({ channel: 'C0OPS', ts: ref.split(':')[1] });
      expect(slack.messages).toHaveLength(1);
      expect(slack.messages[0]).toMatchObject({ edits: 2, text: expect.stringContaining('All 3 steps done') });
    });

    it('posts an attention message anew even when the run has a progress message', async () => {
      const first = await sut.send(progress('Step 1 of 3', null));

      await sut.send(delivery({ thread: { ref: first.ok ? first.threadRef! : '' } }));

      expect(slack.calls.map((call) => call.method)).toEqual(['chat.postMessage', 'chat.postMessage']);
      expect(slack.messages).toHaveLength(2);
    });

    it('posts a new progress message when the old one is gone', async () => {
      const outcome = await sut.send(progress('Step 2 of 3', 'C0OPS:1699999999.000001'));

      expect(slack.calls.map((call) => call.method)).toEqual(['chat.update', 'chat.postMessage']);
      expect(outcome).toEqual({ ok: true, status: 200, threadRef: `C0OPS:${slack.messages[0]!.ts}` });
    });

    it('gives up on a refused token without quoting it', async () => {
      const outcome = await sut.send(delivery({ credential: bot({ botToken: 'xoxb-revoked-0000' }) }));

      expect(outcome).toEqual({ ok: false, retryable: false, status: 200, code: 'slack_invalid_auth', message: "Slack's chat.postMessage answered invalid_auth: the bot token was refused" });
      expect(JSON.stringify(outcome)).not.toContain('xoxb-');
    });

    it('gives up on a channel Slack does not know', async () => {
      const outcome = await sut.send(channelDelivery({ channel: 'slack', to: '#nowhere' }, { credential: bot(), allowPrivate: [slack.hostPort] }));

      expect(outcome).toMatchObject({ ok: false, retryable: false, code: 'slack_channel_not_found' });
    });

    it('retries when rate limited, after the Retry-After Slack gives', async () => {
      slack.failNext({ status: 429, headers: { 'retry-after': '30' }, body: { ok: false, error: 'ratelimited' } }, { headers: { 'retry-after': '5' }, body: { ok: false, error: 'ratelimited' } });

      const limited = await sut.send(delivery());
      const alsoLimited = await sut.send(delivery());

      expect(limited).toMatchObject({ ok: false, retryable: true, status: 429, code: 'slack_ratelimited', retryAfterMs: 30_000 });
      expect(alsoLimited).toMatchObject({ ok: false, retryable: true, status: 200, code: 'slack_ratelimited', retryAfterMs: 5_000 });
    });

    it('retries when Slack fails', async () => {
      slack.failNext({ status: 503, body: { ok: false } }, { body: { ok: false, error: 'internal_error' } });

      await expect(sut.send(delivery())).resolves.toMatchObject({ ok: false, retryable: true, status: 503, code: 'http_503' });
      await expect(sut.send(delivery())).resolves.toMatchObject({ ok: false, retryable: true, code: 'slack_internal_error' });
    });

    it('refuses a private API the operator did not allow, before connecting', async () => {
      const outcome = await sut.send(delivery({ credential: bot({ apiBaseUrl: `https://${slack.hostPort}/api/` }), allowPrivate: [] }));

      expect(outcome).toMatchObject({ ok: false, retryable: false, status: null, code: 'destination_not_allowed' });
      expect(slack.calls).toHaveLength(0);
    });

    it('refuses to send the token over plain http unless the operator allowlisted the host', async () => {
      const publicHost = await sut.send(delivery({ credential: bot({ apiBaseUrl: 'http://slack.example.com/api/' }) }));
      const notAllowlisted = await sut.send(delivery({ allowPrivate: [] }));

      expect(publicHost).toMatchObject({ ok: false, retryable: false, code: 'credential_invalid', message: expect.stringContaining('plain http') });
      expect(notAllowlisted).toMatchObject({ ok: false, retryable: false, code: 'credential_invalid' });
      expect(JSON.stringify([publicHost, notAllowlisted])).not.toContain(slack.token);
      expect(slack.calls).toHaveLength(0);
    });
  });

  it('gives up on a route without a usable credential, without quoting it', async () => {
    const none = await sut.send(delivery({ credential: null }));
    const broken = await sut.send(delivery({ credential: '{"botToken": "xoxb-half-written' }));
    const wrong = await sut.send(delivery({ credential: JSON.stringify({ botToken: 'not-a-token-xyz' }) }));

    expect(none).toMatchObject({ ok: false, retryable: false, code: 'credential_required' });
    expect(broken).toMatchObject({ ok: false, retryable: false, code: 'credential_invalid' });
    expect(wrong).toMatchObject({ ok: false, retryable: false, code: 'credential_invalid', message: expect.stringContaining('botToken') });
    expect(JSON.stringify([broken, wrong])).not.toMatch(/xoxb-half|not-a-token/);
    expect(slack.calls).toHaveLength(0);
  });
});
