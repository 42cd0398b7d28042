import { DomainError } from '@packetagent/contracts';

export type SmtpErrorCode =
  /** The credential is not the SMTP configuration JSON (or misses a field). */
  | 'smtp_config_invalid'
  /** The server did not upgrade to TLS when asked (STARTTLS refused or not offered). */
  | 'smtp_tls_required'
  /** The TLS handshake failed: an untrusted or mismatched certificate, or no TLS on that port. */
  | 'smtp_tls_failed'
  | 'smtp_auth_failed'
  /** The server refused the sender, a recipient or the message; `smtpCode` says how. */
  | 'smtp_rejected'
  /** The message names no recipient, or more than one. */
  | 'recipient_invalid'
  | 'destination_not_allowed'
  | 'dns_failed'
  | 'connection_failed'
  | 'timeout'
  | 'aborted';

/**
 * Whether the same message may go through later unchanged: a 4xx reply, a lost connection or a
 * timeout. A 5xx reply, a refused login, TLS or configuration trouble need a person first.
 */
function retryable(code: SmtpErrorCode, smtpCode: number | null): boolean {
  switch (code) {
    case 'smtp_auth_failed':
    case 'smtp_rejected':
      return smtpCode !== null && smtpCode >= 400 && smtpCode < 500;
    case 'dns_failed':
    case 'connection_failed':
    case 'timeout':
    case 'aborted':
      return true;
    case 'smtp_config_invalid':
    case 'smtp_tls_required':
    case 'smtp_tls_failed':
    case 'recipient_invalid':
    case 'destination_not_allowed':
      return false;
  }
}

/**
 * A send that did not reach the server's queue. Messages never quote the password (nor the
 * configuration it came in); `smtpCode` is the server's reply code when it gave one.
 */
export class SmtpError extends DomainError {
  override readonly retryable: boolean;

  constructor(
    readonly code: SmtpErrorCode,
    message: string,
    readonly smtpCode: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retryable = retryable(code, smtpCode);
  }
}
