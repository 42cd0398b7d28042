import { createHash } from 'node:crypto';
import type { SmtpMessage } from '@packetagent/tools';
import type { ChannelDelivery } from '../channel';
import { expiryText, originText } from '../message-phrases';

/** RFC 5322 allows 998 characters a line; a subject past a screen's width helps nobody. */
const SUBJECT_MAX = 200;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * `<delivery id>.delivery@<sender's domain>`: the same on every attempt, so a receiving system
 * that saw the first one can tell a retry apart. Ids outside msg-id's characters are hashed.
 */
export function deliveryMessageId(deliveryId: string, from: string): string {
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from)?.[1] ?? 'packetagent.invalid';
  const local = /^[A-Za-z0-9._-]{1,128}$/.test(deliveryId) ? deliveryId : createHash('sha256').update(deliveryId).digest('hex');
  return `${local}.delivery@${domain}`;
}

function plainText(delivery: ChannelDelivery): string {
  const { message, actions, consoleUrl } = delivery;
  const lines = [message.title, '', message.text.trim()];
  if (actions.length > 0) {
    lines.push('', 'To act (each link works once):');
    for (const action of actions) lines.push(`  ${action.label}: ${action.url} (expires ${expiryText(action.expiresAt)})`);
  }
  if (consoleUrl) lines.push('', `Open in the console: ${consoleUrl}`);
  lines.push('', '--', `PacketAgent: ${originText(message)} · delivery ${message.deliveryId}`);
  return lines.join('\n');
}

function html(delivery: ChannelDelivery): string {
  const { message, actions, consoleUrl } = delivery;
  const paragraphs = message.text
    .trim()
    .split(/\n\s*\n/)
    .map((paragraph) => `<p style="margin:0 0 12px">${escapeHtml(paragraph).replace(/\n/g, '<br>')}</p>`);
  const parts = [
    '<!doctype html>',
    '<html><body style="font-family:sans-serif;font-size:14px;line-height:1.5;color:#1f2328">',
    `<h1 style="font-size:18px;margin:0 0 12px">${escapeHtml(message.title)}</h1>`,
    ...paragraphs,
  ];
  if (actions.length > 0) {
    parts.push('<p style="margin:16px 0 4px">To act (each link works once):</p>', '<ul style="margin:0 0 12px;padding-left:20px">');
    for (const action of actions) {
      parts.push(`<li><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a> <span style="color:#59636e">(expires ${escapeHtml(expiryText(action.expiresAt))})</span></li>`);
    }
    parts.push('</ul>');
  }
  if (consoleUrl) parts.push(`<p style="margin:12px 0"><a href="${escapeHtml(consoleUrl)}">Open in the console</a></p>`);
  parts.push(`<p style="margin:16px 0 0;color:#59636e;font-size:12px">PacketAgent: ${escapeHtml(originText(message))} · delivery ${escapeHtml(message.deliveryId)}</p>`, '</body></html>');
  return parts.join('\n');
}

/**
 * The email for a delivery: the title as subject, the facts and one link per action in a plain
 * text and an HTML part (every value escaped), and headers that name the delivery. A message of
 * the same run posted before (`thread`) is referenced, so mail clients group a run's messages.
 */
export function emailMessage(delivery: ChannelDelivery, to: string, from: string): SmtpMessage {
  const messageId = deliveryMessageId(delivery.message.deliveryId, from);
  const headers: Record<string, string> = {
    'X-PacketAgent-Delivery': oneLine(delivery.message.deliveryId, 200),
    // RFC 3834: an automatic message, so out-of-office replies and the like stay away.
    'Auto-Submitted': 'auto-generated',
  };
  const thread = delivery.thread?.ref;
  if (thread && /^<[^<>\s]+>$/.test(thread)) {
    headers['In-Reply-To'] = thread;
    headers['References'] = thread;
  }
  return {
    to,
    subject: oneLine(delivery.message.title, SUBJECT_MAX) || 'PacketAgent notification',
    text: plainText(delivery),
    html: html(delivery),
    messageId,
    headers,
  };
}
