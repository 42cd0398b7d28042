import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { TestCertificate } from './test-certificate-authority';

/**
 * `starttls`: a plaintext greeting that offers STARTTLS; `implicit`: TLS from the first byte;
 * `no-starttls`: a plaintext server that neither offers nor accepts STARTTLS.
 */
export type SmtpServerTlsMode = 'starttls' | 'implicit' | 'no-starttls';

export interface SmtpServerOptions {
  /** The server's certificate (see testCertificateAuthority). */
  certificate: TestCertificate;
  tls?: SmtpServerTlsMode;
  /** user → password; when given, a message is accepted only after a login. */
  users?: Readonly<Record<string, string>>;
  /** Answers RCPT TO for an address with an SMTP error, e.g. `{ code: 450, message: 'mailbox busy' }`. */
  rejectRecipient?: (address: string) => { code: number; message: string } | null;
}

export interface ReceivedMail {
  /** The envelope, as MAIL FROM and RCPT TO named it. */
  from: string;
  to: string[];
  /** Whether the session was encrypted when the message came. */
  secure: boolean;
  /** The SNI name the client sent, null when none. */
  servername: string | null;
  user: string | null;
  raw: string;
  /** Header names in lower case, values unfolded and with encoded words decoded (the first of repeated ones). */
  headers: Record<string, string>;
  subject: string;
  /** The decoded text/plain and text/html parts with LF line ends, null when absent. */
  text: string | null;
  html: string | null;
}

export interface LoginAttempt {
  user: string;
  secure: boolean;
  accepted: boolean;
}

export interface TestSmtpServer {
  host: '127.0.0.1';
  port: number;
  /** Every message accepted, in order. */
  received: ReceivedMail[];
  logins: LoginAttempt[];
  /** How many connections reached the server. */
  connections(): number;
  close(): Promise<void>;
}

/** An SMTP server on a loopback port that records what reaches it; it delivers nothing. */
export async function startSmtpServer(options: SmtpServerOptions): Promise<TestSmtpServer> {
  const mode = options.tls ?? 'starttls';
  const users = options.users;
  const received: ReceivedMail[] = [];
  const logins: LoginAttempt[] = [];
  let connections = 0;
  const server = new SMTPServer({
    secure: mode === 'implicit',
    key: options.certificate.key,
    cert: options.certificate.cert,
    hideSTARTTLS: mode === 'no-starttls',
    disabledCommands: [...(mode === 'no-starttls' ? ['STARTTLS'] : []), ...(users ? [] : ['AUTH'])],
    authOptional: users === undefined,
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 200,
    onConnect(_session, callback) {
      connections += 1;
      callback();
    },
    onAuth(auth, session, callback) {
      const user = auth.username ?? '';
      const accepted = users !== undefined && Object.hasOwn(users, user) && users[user] === auth.password;
      logins.push({ user, secure: session.secure, accepted });
      if (!accepted) return callback(smtpError(535, 'Authentication credentials invalid'));
      callback(null, { user });
    },
    onRcptTo(address, _session, callback) {
      const refusal = options.rejectRecipient?.(address.address);
      callback(refusal ? smtpError(refusal.code, refusal.message) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push(receivedMail(Buffer.concat(chunks).toString('utf8'), session));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    received,
    logins,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

function receivedMail(raw: string, session: SMTPServerSession): ReceivedMail {
  const envelope = session.envelope;
  const message = parseMessage(raw);
  return {
    from: envelope.mailFrom ? envelope.mailFrom.address : '',
    to: envelope.rcptTo.map((recipient) => recipient.address),
    secure: session.secure,
    servername: typeof session.servername === 'string' ? session.servername : null,
    user: typeof session.user === 'string' ? session.user : null,
    raw,
    headers: message.headers,
    subject: message.headers['subject'] ?? '',
    text: message.text,
    html: message.html,
  };
}

// ---------------------------------------------------------------------------------------------
// Just enough MIME to read what nodemailer writes: one part, or multipart/alternative.

interface ParsedPart {
  headers: Record<string, string>;
  body: string;
}

function splitPart(raw: string): ParsedPart {
  const end = raw.indexOf('\r\n\r\n');
  const head = end >= 0 ? raw.slice(0, end) : raw;
  const body = end >= 0 ? raw.slice(end + 4) : '';
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= decodeEncodedWords(line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeEncodedWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[QqBb]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_word, _charset: string, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
    );
}

function decodeBody(part: ParsedPart): string {
  const encoding = (part.headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = part.body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return part.body;
}

function parseMessage(raw: string): { headers: Record<string, string>; text: string | null; html: string | null } {
  const message = splitPart(raw);
  const type = message.headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  const parts = boundary
    ? message.body
        .split(`--${boundary}`)
        .slice(1, -1)
        .map((chunk) => splitPart(chunk.replace(/^\r\n/, '').replace(/\r\n$/, '')))
    : [message];
  const find = (mime: string) => {
    const part = parts.find((candidate) => (candidate.headers['content-type'] ?? 'text/plain').toLowerCase().startsWith(mime));
    // SMTP carries CRLF line ends; tests compare with the LF text they sent.
    return part ? decodeBody(part).replace(/\r\n$/, '').replace(/\r\n/g, '\n') : null;
  };
  return { headers: message.headers, text: find('text/plain'), html: find('text/html') };
}
