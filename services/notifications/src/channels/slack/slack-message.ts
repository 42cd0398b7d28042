import type { RemoteAction } from '@packetagent/contracts';
import type { ChannelDelivery } from '../channel';
import { expiryText, originText } from '../message-phrases';

/** Block Kit's limits (characters) and Slack's on a message's text. */
const HEADER_MAX = 150;
const SECTION_MAX = 3_000;
const BUTTON_TEXT_MAX = 75;
const BUTTONS_MAX = 25;
const TEXT_MAX = 4_000;

const PRIMARY: ReadonlySet<RemoteAction> = new Set(['approve', 'approve_for_run', 'resume']);
const DANGER: ReadonlySet<RemoteAction> = new Set(['reject', 'stop', 'revoke']);

export type SlackBlock = Record<string, unknown>;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Slack reads `&`, `<` and `>` in mrkdwn as markup; everything shown as text goes through this. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `<url|label>`, with the characters that would end the link early encoded. */
function link(url: string, label: string): string {
  return `<${url.replace(/\|/g, '%7C').replace(/>/g, '%3E')}|${escapeMrkdwn(label).replace(/\|/g, '¦')}>`;
}

/** The message as mrkdwn text: the whole of an incoming-webhook post, and the notification fallback of a bot one. */
export function slackText(delivery: ChannelDelivery): string {
  const { message, actions, consoleUrl } = delivery;
  const lines = [`*${escapeMrkdwn(message.title)}*`, escapeMrkdwn(message.text.trim())];
  for (const action of actions) lines.push(`${link(action.url, action.label)} (expires ${expiryText(action.expiresAt)})`);
  const origin = escapeMrkdwn(originText(message));
  lines.push(consoleUrl ? `${link(consoleUrl, 'Open in the console')} · ${origin}` : origin);
  return cut(lines.join('\n'), TEXT_MAX);
}

/**
 * Block Kit for a bot post: a header with the title, a section with the facts, a context with
 * the worker, run and console link, and one URL button per action that says when it expires.
 */
export function slackBlocks(delivery: ChannelDelivery): SlackBlock[] {
  const { message, actions, consoleUrl } = delivery;
  const context = escapeMrkdwn(originText(message));
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: cut(message.title, HEADER_MAX), emoji: false } },
    { type: 'section', text: { type: 'mrkdwn', text: cut(escapeMrkdwn(message.text.trim()) || ' ', SECTION_MAX) } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: consoleUrl ? `${context} · ${link(consoleUrl, 'Open in the console')}` : context }] },
  ];
  if (actions.length > 0) {
    blocks.push({
      type: 'actions',
      elements: actions.slice(0, BUTTONS_MAX).map((action, index) => ({
        type: 'button',
        action_id: `packetagent-${index}-${action.action}`,
        text: { type: 'plain_text', text: cut(`${action.label} (expires ${expiryText(action.expiresAt)})`, BUTTON_TEXT_MAX), emoji: false },
        url: action.url,
        ...(PRIMARY.has(action.action) ? { style: 'primary' } : DANGER.has(action.action) ? { style: 'danger' } : {}),
      })),
    });
  }
  return blocks;
}
