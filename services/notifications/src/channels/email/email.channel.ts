import { parseSmtpConfig, sendSmtpMail, SmtpError, type HostResolver } from '@packetagent/tools';
import type { Channel, ChannelDelivery, ChannelOutcome } from '../channel';
import { emailMessage } from './email-message';

export interface EmailChannelOptions {
  /** Every A and AAAA answer for a host name; the system resolver when absent (tests inject one). */
  resolveHost?: HostResolver;
}

/**
 * Email through the SMTP server the route's credential configures (see parseSmtpConfig), to the
 * route's one address. TLS always: implicit or required STARTTLS. A 4xx reply or a broken
 * connection is worth another attempt; a 5xx reply, a refused login, TLS trouble or a bad
 * configuration is not, until someone fixes it and redrives.
 */
export class EmailChannel implements Channel {
  readonly channel = 'email' as const;

  constructor(private readonly options: EmailChannelOptions = {}) {}

  async send(delivery: ChannelDelivery): Promise<ChannelOutcome> {
    const to = delivery.route.to;
    if (to === null) return refused('route_invalid', 'the email route has no "to" address');
    if (delivery.credential === null) return refused('credential_required', 'the email route names no credential: it holds the SMTP server configuration');
    try {
      const config = parseSmtpConfig(delivery.credential, 'the email route\'s credential');
      const message = emailMessage(delivery, to, config.from);
      const sent = await sendSmtpMail({
        config,
        message,
        allowPrivate: delivery.allowPrivate,
        timeoutMs: delivery.timeoutMs,
        signal: delivery.signal,
        ...(this.options.resolveHost ? { resolveHost: this.options.resolveHost } : {}),
      });
      return { ok: true, status: null, threadRef: `<${sent.messageId}>` };
    } catch (error) {
      if (!(error instanceof SmtpError)) throw error;
      return { ok: false, retryable: error.retryable, status: null, code: error.code, message: error.message };
    }
  }
}

function refused(code: string, message: string): ChannelOutcome {
  return { ok: false, retryable: false, status: null, code, message };
}
