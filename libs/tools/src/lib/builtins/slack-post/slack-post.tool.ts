import { CREDENTIAL_NAME_PATTERN, normaliseResource } from '@packetagent/contracts';
import { z } from 'zod';
import type { ToolOutcome } from '../../tool.types';
import { ToolFailure } from '../../errors';
import type { BuiltinTool } from '../../internal/builtin';
import { deadline } from '../../internal/deadline';
import { toParameters } from '../../internal/schema';
import { oneLine, redactBulk, truncateText } from '../../internal/text';
import { exchange } from '../../net/http-client';

/** Slack's own limit on a message's text. */
const SLACK_TEXT_MAX = 40_000;
const SLACK_HOST = 'hooks.slack.com';

const ArgsSchema = z.strictObject({
  channel: z
    .string()
    .superRefine((channel, ctx) => {
      const checked = normaliseResource('slack_post', channel);
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
    })
    .describe('The channel, as "#name".'),
  text: z.string().min(1).max(SLACK_TEXT_MAX).describe('The message (Slack mrkdwn).'),
  credential: z.string().regex(CREDENTIAL_NAME_PATTERN, 'not a credential name').describe('Name of the credential holding the incoming-webhook URL for the channel.'),
});

export type SlackPostArgs = z.output<typeof ArgsSchema>;

/**
 * The URL to post to: the webhook URL from the credential, with its origin replaced by the
 * configured base when there is one. Errors never quote the URL, which is itself the secret.
 */
function webhookUrl(secret: string, base: string | undefined): URL {
  let url: URL;
  try {
    url = new URL(secret);
  } catch {
    throw new ToolFailure('credential_invalid', 'the Slack credential is not a webhook URL');
  }
  if (base !== undefined) return new URL(`${url.pathname}${url.search}`, base);
  if (url.protocol !== 'https:' || url.hostname !== SLACK_HOST) throw new ToolFailure('credential_invalid', `the Slack credential is not an https://${SLACK_HOST} webhook URL`);
  return url;
}

export const slackPostTool: BuiltinTool<SlackPostArgs> = {
  descriptor: {
    tool: 'slack_post',
    description: 'Posts a message to a Slack channel through the incoming webhook held in a named credential.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: () => 'post',
    resource: (args) => args.channel.toLowerCase(),
    mutating: () => true,
    // Incoming webhooks take no idempotency key: a repeated post is a second message.
    idempotentByKey: () => false,
    credentials: (args) => [args.credential],
    redact: (args) => ({ channel: args.channel, text: redactBulk(args.text), credential: args.credential }),
  },

  async execute(args, ctx, env): Promise<ToolOutcome> {
    const secret = ctx.credentials[args.credential];
    if (!secret) throw new ToolFailure('credential_unavailable', `the credential "${args.credential}" was not provided for this call`);
    const url = webhookUrl(secret, env.config.slackWebhookBaseUrl);
    const channel = args.channel.toLowerCase();
    const limit = deadline(ctx.signal, env.config.httpTimeoutMs);
    try {
      const response = await exchange({
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'packetagent-slack-post' },
        body: Buffer.from(JSON.stringify({ channel, text: args.text }), 'utf8'),
        // The destination is the operator's webhook (or configured base), not a model-chosen URL.
        pinned: null,
        maxResponseBytes: 64 * 1024,
        signal: limit.signal,
      });
      const answer = truncateText(response.body.toString('utf8'), 500).text.trim();
      if (response.status !== 200) {
        // Slack answers errors as a short code in plain text (channel_not_found, invalid_token...).
        const message = `Slack refused the message (${response.status}${answer ? `: ${oneLine(answer, 200)}` : ''})`;
        return { ok: false, output: { channel, status: response.status, error: { code: 'slack_error', message } }, summary: `post to ${channel} failed (${response.status})`, error: { code: 'slack_error', message } };
      }
      return { ok: true, output: { channel, posted: true }, summary: `posted ${args.text.length} characters to ${channel}` };
    } finally {
      limit.dispose();
    }
  },
};
