import { isIP } from 'node:net';
import { createTransport } from 'nodemailer';
import { ToolFailure } from '../errors';
import { abortable, deadline } from '../internal/deadline';
import { oneLine } from '../internal/text';
import { checkedDestination, systemResolver } from '../net/destination';
import type { HostResolver } from '../tool.types';
import { singleMailbox, type SmtpConfig } from './smtp-config';
import { SmtpError } from './smtp-error';

export interface SmtpMessage {
  /** One address, bare (`ops@example.com`); anything naming more than one is refused. */
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Without angle brackets: `<local>@<domain>`; nodemailer makes one up when absent. */
  messageId?: string;
  /** Extra headers, e.g. `X-PacketAgent-Delivery`. */
  headers?: Readonly<Record<string, string>>;
}

export interface SmtpSendRequest {
  config: SmtpConfig;
  message: SmtpMessage;
  /** Exact `host:port` pairs that may resolve to private addresses (operator allowlist). */
  allowPrivate: readonly string[];
  /** From the start of the address checks to the server's answer to the message. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Every A and AAAA answer for a host name; the system resolver when absent. */
  resolveHost?: HostResolver;
}

export interface SmtpSent {
  messageId: string;
  /** The server's answer to the message (`250 ...`), on one line. */
  response: string;
  /** The address the connection was made to, after every address of the host was checked. */
  connectedAddress: string;
}

/** What nodemailer sets on the errors it reports. */
interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  command?: string;
}

/**
 * Sends one message over SMTP, encrypted or not at all. The server's host is resolved and every
 * address checked as checkedFetch does (private ones only when `host:port` is allowlisted), the
 * connection goes to the checked address, and the host name stays the TLS server name, so the
 * certificate is checked against the name configured rather than an address.
 */
export async function sendSmtpMail(request: SmtpSendRequest): Promise<SmtpSent> {
  const { config, message } = request;
  // Policy granted one recipient: a list, or a display name hiding another address, is not it.
  const recipient = singleMailbox(message.to);
  if (!recipient || recipient.address !== message.to.trim()) throw new SmtpError('recipient_invalid', 'the recipient must be one bare email address');
  const sender = singleMailbox(config.from)!;
  const limit = deadline(request.signal ?? new AbortController().signal, request.timeoutMs);
  let transport: ReturnType<typeof createTransport> | null = null;
  try {
    const pinned = await abortable(
      checkedDestination(destinationUrl(config), { resolveHost: request.resolveHost ?? systemResolver, allowPrivate: request.allowPrivate }),
      limit.signal,
    );
    const servername = isIP(config.host) === 0 ? config.host : undefined;
    transport = createTransport({
      host: pinned.address,
      port: config.port,
      secure: config.security === 'tls',
      requireTLS: config.security === 'starttls',
      ...(servername ? { servername } : {}),
      tls: { minVersion: 'TLSv1.2', rejectUnauthorized: true, ...(servername ? { servername } : {}), ...(config.ca ? { ca: config.ca } : {}) },
      ...(config.user !== undefined ? { auth: { user: config.user, pass: config.password ?? '' }, forceAuth: true } : {}),
      connectionTimeout: request.timeoutMs,
      greetingTimeout: request.timeoutMs,
      socketTimeout: request.timeoutMs,
      logger: false,
      debug: false,
      transactionLog: false,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    const info = await transport.sendMail({
      from: config.from,
      to: recipient.address,
      // Set, not derived from the headers, so exactly this one address is handed to the server.
      envelope: { from: sender.address, to: [recipient.address] },
      subject: message.subject,
      text: message.text,
      ...(message.html !== undefined ? { html: message.html } : {}),
      ...(message.messageId !== undefined ? { messageId: `<${message.messageId}>` } : {}),
      ...(message.headers ? { headers: { ...message.headers } } : {}),
      signal: limit.signal,
    });
    return { messageId: info.messageId.replace(/^<|>$/g, ''), response: oneLine(scrubbed(String(info.response ?? ''), config), 300), connectedAddress: pinned.address };
  } catch (error) {
    throw smtpErrorOf(error, config, limit.signal, request.signal);
  } finally {
    limit.dispose();
    transport?.close();
  }
}

/** A URL only for the address checks, which take URLs: its scheme is not what is dialled. */
function destinationUrl(config: SmtpConfig): URL {
  const host = isIP(config.host) === 6 ? `[${config.host}]` : config.host;
  return new URL(`https://${host}:${config.port}`);
}

/** The server's words, without the password should a server ever echo it (plain or base64). */
function scrubbed(text: string, config: SmtpConfig): string {
  let result = text;
  const secrets = config.password ? [config.password, Buffer.from(config.password, 'utf8').toString('base64')] : [];
  for (const secret of secrets) result = result.split(secret).join('***');
  return result;
}

const TLS_TROUBLE = /certificate|self[- ]signed|altname|does not match|unable to verify|wrong version number|ssl|tls|handshake/i;

/** Node's words for a failed handshake, without OpenSSL's source locations. */
function tlsReason(message: string): string {
  if (/wrong version number|packet length too long|unknown protocol/i.test(message)) return 'the server did not answer in TLS (is the security mode right for this port?)';
  return oneLine(message.replace(/^Error initiating TLS - /, '').replace(/^[0-9A-F]+:error:[^:]*:[^:]*:[^:]*:([^:]+):.*$/, '$1'), 300);
}

function smtpErrorOf(error: unknown, config: SmtpConfig, limit: AbortSignal, caller: AbortSignal | undefined): SmtpError {
  if (error instanceof SmtpError) return error;
  if (caller?.aborted) return new SmtpError('aborted', 'the send was aborted', null, { cause: error });
  if (limit.aborted) return new SmtpError('timeout', `${config.host}:${config.port} did not take the message within the time allowed`, null, { cause: error });
  if (error instanceof ToolFailure) {
    const code = error.code === 'destination_not_allowed' || error.code === 'dns_failed' ? error.code : 'connection_failed';
    return new SmtpError(code, error.message, null, { cause: error });
  }
  const failure = (error ?? {}) as NodemailerError;
  const smtpCode = typeof failure.responseCode === 'number' ? failure.responseCode : null;
  const said = (text: string | undefined) => oneLine(scrubbed(text ?? '', config), 300);
  const server = `${config.host}:${config.port}`;
  switch (failure.code) {
    case 'ETLS':
      // With a reply code, the server answered STARTTLS with a refusal; without, the handshake broke.
      if (smtpCode !== null) return new SmtpError('smtp_tls_required', `${server} refused to upgrade the session to TLS (it answered ${smtpCode}); nothing was sent`, smtpCode, { cause: error });
      return new SmtpError('smtp_tls_failed', `the TLS handshake with ${server} failed: ${tlsReason(failure.message)}`, null, { cause: error });
    case 'EAUTH':
      return new SmtpError('smtp_auth_failed', `${server} refused the login of the configured user${smtpCode ? ` (${smtpCode})` : ''}`, smtpCode, { cause: error });
    case 'ENOAUTH':
      return new SmtpError('smtp_config_invalid', 'the SMTP configuration has no credentials for the login the server asks for', null, { cause: error });
    case 'ECONFIG':
      return new SmtpError('smtp_config_invalid', `the SMTP configuration was refused: ${said(failure.message)}`, null, { cause: error });
    case 'ETIMEDOUT':
      return new SmtpError('timeout', `${server} did not answer in time`, null, { cause: error });
    case 'EABORT':
      return new SmtpError('aborted', 'the send was aborted', null, { cause: error });
  }
  if (failure.code === 'ECONNECTION' && /STARTTLS/.test(failure.message)) {
    return new SmtpError('smtp_tls_required', `${server} does not speak ESMTP, so STARTTLS is impossible; nothing was sent`, smtpCode, { cause: error });
  }
  if (smtpCode !== null && smtpCode >= 400 && smtpCode !== 421) {
    return new SmtpError('smtp_rejected', `${server} refused the message: ${said(failure.message)}`, smtpCode, { cause: error });
  }
  if (failure.code === 'ESOCKET' && TLS_TROUBLE.test(failure.message)) {
    return new SmtpError('smtp_tls_failed', `the TLS handshake with ${server} failed: ${tlsReason(failure.message)}`, null, { cause: error });
  }
  return new SmtpError('connection_failed', `the connection to ${server} failed: ${said(failure.message)}`, smtpCode, { cause: error });
}
