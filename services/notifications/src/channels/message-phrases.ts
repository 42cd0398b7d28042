import type { OutboundMessage } from './channel';

/** `2025-06-01 14:00 UTC`: absolute, so the words stay true on a retry and in any time zone. */
export function expiryText(expiresAt: string): string {
  const at = new Date(expiresAt);
  if (Number.isNaN(at.getTime())) return expiresAt;
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** `worker release-bot · run run-42 (running)`: where a message comes from, in one line. */
export function originText(message: OutboundMessage): string {
  const parts = [`worker ${message.worker.name}`];
  if (message.run) parts.push(`run ${message.run.id}${message.run.state ? ` (${message.run.state})` : ''}`);
  return parts.join(' · ');
}
