import { THREADED_TRIGGERS } from '../threaded-triggers';
import { checkedFetch, CheckedFetchError, type CheckedFetchResponse } from '@packetagent/tools';
import type { Channel, ChannelDelivery, ChannelOutcome } from '../channel';
import { retryAfterMs } from '../retry-after';
import { parseSlackCredential, plaintextRefused } from './slack-credential';
import { slackBlocks, slackText } from './slack-message';

const MAX_RESPONSE_BYTES = 64 * 1024;
/** A run's progress, and the end that follows it, edit the one message the progress started. */
const EDITS_IN_PLACE = THREADED_TRIGGERS;
/** Web API errors another attempt can get past; every other one needs a person (token, channel, app scopes). */
const RETRYABLE_ERRORS = new Set(['ratelimited', 'rate_limited', 'service_unavailable', 'internal_error', 'fatal_error', 'request_timeout']);
/** chat.update cannot edit the message any more: post a new one instead. */
const GONE_ERRORS = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed', 'msg_too_long_to_update']);
const HINTS: Readonly<Record<string, string>> = {
  invalid_auth: 'the bot token was refused',
  not_authed: 'no bot token reached Slack',
  token_revoked: 'the bot token was revoked',
  account_inactive: 'the bot token belongs to a deactivated app or user',
  channel_not_found: 'no such channel, or the app cannot see it',
  not_in_channel: 'invite the app to the channel',
  is_archived: 'the channel is archived',
  missing_scope: 'the app lacks the chat:write scope',
};

export interface SlackChannelOptions {
  clock?: () => Date;
}

type Failure = Extract<ChannelOutcome, { ok: false }>;
type ApiAnswer = { ok: true; status: number; body: Record<string, unknown> } | { ok: false; outcome: Failure; slackError: string | null };

/**
 * Slack through the route's credential: an incoming webhook (one simple message per delivery),
 * or a bot token, which posts Block Kit with chat.postMessage and edits a run's progress
 * message with chat.update (`threadRef` is `<channel id>:<ts>`). Every request goes through the
 * checked network client; neither the token nor the webhook URL appears in an outcome.
 */
export class SlackChannel implements Channel {
  readonly channel = 'slack' as const;
  private readonly clock: () => Date;

  constructor(options: SlackChannelOptions = {}) {
    this.clock = options.clock ?? (() => new Date());
  }

  async send(delivery: ChannelDelivery): Promise<ChannelOutcome> {
    const credential = parseSlackCredential(delivery.credential);
    if (!credential.ok) return refused(credential.code, credential.message);
    const destination = credential.value.kind === 'webhook' ? credential.value.url : credential.value.apiBaseUrl;
    if (plaintextRefused(destination, delivery.allowPrivate)) {
      return refused('credential_invalid', 'the Slack credential points to plain http: use https (http is only for a private host:port the operator allowlisted)');
    }
    if (credential.value.kind === 'webhook') return this.postWebhook(credential.value.url, delivery);

    const { token, apiBaseUrl } = credential.value;
    const target = editTarget(delivery);
    const content = { text: slackText(delivery), blocks: slackBlocks(delivery) };
    if (target) {
      const updated = await this.call(apiBaseUrl, 'chat.update', token, { channel: target.channel, ts: target.ts, ...content }, delivery);
      if (updated.ok) return { ok: true, status: updated.status, threadRef: `${target.channel}:${target.ts}` };
      if (!GONE_ERRORS.has(updated.slackError ?? '')) return updated.outcome;
    }
    const channel = delivery.route.to;
    if (channel === null) return refused('route_invalid', 'the Slack route has no "to" channel, which a bot token needs');
    const posted = await this.call(apiBaseUrl, 'chat.postMessage', token, { channel, ...content, unfurl_links: false, unfurl_media: false }, delivery);
    if (!posted.ok) return posted.outcome;
    const postedChannel = posted.body['channel'];
    const ts = posted.body['ts'];
    return { ok: true, status: posted.status, ...(typeof postedChannel === 'string' && typeof ts === 'string' ? { threadRef: `${postedChannel}:${ts}` } : {}) };
  }

  private async postWebhook(url: URL, delivery: ChannelDelivery): Promise<ChannelOutcome> {
    const response = await this.exchange(url, {}, { text: slackText(delivery) }, delivery);
    if (unreached(response)) return response;
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    // Webhooks answer errors as a short code in plain text (no_text, channel_not_found, ...).
    const code = slackErrorCode(response.body.toString('utf8').trim());
    return this.httpFailure(response, 'the Slack webhook', code);
  }

  private async call(base: URL, method: string, token: string, body: Record<string, unknown>, delivery: ChannelDelivery): Promise<ApiAnswer> {
    const response = await this.exchange(new URL(method, base), { authorization: `Bearer ${token}` }, body, delivery);
    if (unreached(response)) return { ok: false, outcome: response, slackError: null };
    if (response.status !== 200) return { ok: false, outcome: this.httpFailure(response, `Slack's ${method}`, null), slackError: null };
    let answer: unknown;
    try {
      answer = JSON.parse(response.body.toString('utf8'));
    } catch {
      answer = null;
    }
    if (!answer || typeof answer !== 'object' || typeof (answer as { ok?: unknown }).ok !== 'boolean') {
      return { ok: false, outcome: { ok: false, retryable: true, status: 200, code: 'slack_invalid_answer', message: `Slack's ${method} answered something other than its JSON` }, slackError: null };
    }
    const json = answer as Record<string, unknown>;
    if (json['ok'] === true) return { ok: true, status: 200, body: json };
    const error = slackErrorCode(typeof json['error'] === 'string' ? json['error'] : '') ?? 'unknown_error';
    const hint = HINTS[error];
    const retryAfter = retryAfterMs(response.headers['retry-after'], this.clock());
    return {
      ok: false,
      slackError: error,
      outcome: {
        ok: false,
        retryable: RETRYABLE_ERRORS.has(error),
        status: 200,
        code: `slack_${error}`,
        message: `Slack's ${method} answered ${error}${hint ? `: ${hint}` : ''}`,
        ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
      },
    };
  }

  /** One POST through the checked client, or the outcome of not reaching Slack. */
  private async exchange(url: URL, headers: Record<string, string>, body: unknown, delivery: ChannelDelivery): Promise<CheckedFetchResponse | Failure> {
    try {
      return await checkedFetch({
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'packetagent-notifications', ...headers },
        body: Buffer.from(JSON.stringify(body), 'utf8'),
        maxResponseBytes: MAX_RESPONSE_BYTES,
        timeoutMs: delivery.timeoutMs,
        allowPrivate: delivery.allowPrivate,
        signal: delivery.signal,
      });
    } catch (error) {
      if (!(error instanceof CheckedFetchError)) throw error;
      // The message may quote the URL, a secret for a webhook: say what failed, not where.
      return { ok: false, retryable: error.code !== 'destination_not_allowed' && error.code !== 'invalid_url', status: null, code: error.code, message: `Slack could not be reached (${error.code})` };
    }
  }

  private httpFailure(response: CheckedFetchResponse, what: string, slackError: string | null): Failure {
    const status = response.status;
    const retryAfter = retryAfterMs(response.headers['retry-after'], this.clock());
    return {
      ok: false,
      retryable: status >= 500 || status === 408 || status === 429,
      status,
      code: status === 429 ? 'slack_ratelimited' : slackError ? `slack_${slackError}` : `http_${status}`,
      message: `${what} answered ${status}${slackError ? ` ${slackError}` : ''}`,
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    };
  }
}

function unreached(response: CheckedFetchResponse | Failure): response is Failure {
  return 'retryable' in response;
}

/** Slack's error codes are short snake_case words; anything else is not repeated. */
function slackErrorCode(text: string): string | null {
  return /^[a-z][a-z0-9_]{0,63}$/.test(text) ? text : null;
}

/** The message to edit, from the thread ref this route recorded for the run. */
function editTarget(delivery: ChannelDelivery): { channel: string; ts: string } | null {
  if (!delivery.thread || !EDITS_IN_PLACE.has(delivery.message.trigger)) return null;
  const found = /^([A-Z0-9]{1,40}):(\d{1,12}\.\d{1,12})$/.exec(delivery.thread.ref);
  return found ? { channel: found[1]!, ts: found[2]! } : null;
}

function refused(code: string, message: string): Failure {
  return { ok: false, retryable: false, status: null, code, message };
}
