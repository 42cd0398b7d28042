import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { hostKeyFingerprint, hostKeyType } from './host-key';

export interface SshEndpoint {
  host: string;
  port: number;
  user: string;
  /** Pinned fingerprints; any other key is refused before authentication. */
  hostKeys: readonly string[];
}

export interface LinkTimings {
  /** Connect, key exchange and authentication together. */
  connectTimeoutMs: number;
  /** Keepalive probes every this many ms; three unanswered end the link. */
  keepaliveMs: number;
}

/** Why a connection failed, and whether the failure proves the computer is not serving us. */
export class SshConnectError extends Error {
  override readonly name = 'SshConnectError';
  constructor(
    message: string,
    /** Refused, rejected, unknown host, wrong key: a probe may say `offline`. A timeout is not affirmative. */
    readonly affirmative: boolean,
    /** The host presented a key that is not pinned (connections are refused until the record changes). */
    readonly presentedKey: string | null = null,
  ) {
    super(message);
  }
}

function describe(error: Error & { level?: string; code?: string }, endpoint: SshEndpoint): SshConnectError {
  const where = `${endpoint.host}:${endpoint.port}`;
  if (error.level === 'client-authentication') return new SshConnectError(`${endpoint.user}@${where} refused the key: ${error.message}`, true);
  if (error.code === 'ECONNREFUSED') return new SshConnectError(`${where} refused the connection (no SSH server listening)`, true);
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_NONAME') return new SshConnectError(`${endpoint.host} does not resolve`, true);
  if (error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH') return new SshConnectError(`${where} is unreachable (${error.code})`, true);
  if (error.level === 'client-timeout' || /timed out/i.test(error.message)) return new SshConnectError(`${where} did not finish the SSH handshake in time`, false);
  return new SshConnectError(`${where}: ${error.message}`, false);
}

function connectConfig(endpoint: SshEndpoint, timings: LinkTimings, verify: (key: Buffer) => boolean, privateKey: string | null): ConnectConfig {
  return {
    host: endpoint.host,
    port: endpoint.port,
    username: endpoint.user,
    readyTimeout: timings.connectTimeoutMs,
    keepaliveInterval: timings.keepaliveMs,
    keepaliveCountMax: 3,
    hostVerifier: verify,
    ...(privateKey ? { privateKey } : {}),
    // Only the key from the vault: no agent, no password, no keyboard-interactive prompt.
    authHandler: privateKey ? ['publickey'] : ['none'],
    tryKeyboard: false,
  };
}

/** A live, authenticated SSH connection to a computer whose host key matched a pinned one. */
export class SshLink {
  private closed = false;
  private readonly closeListeners = new Set<(reason: string) => void>();

  private constructor(
    private readonly client: Client,
    readonly hostKey: string,
  ) {
    const end = (reason: string) => {
      if (this.closed) return;
      this.closed = true;
      for (const listener of this.closeListeners) listener(reason);
    };
    client.on('error', (error) => end(`the SSH connection failed: ${error.message}`));
    client.on('close', () => end('the SSH connection closed'));
  }

  static open(endpoint: SshEndpoint, privateKey: string, timings: LinkTimings): Promise<SshLink> {
    return new Promise((resolve, reject) => {
      const client = new Client();
      let presented: string | null = null;
      const verify = (key: Buffer): boolean => {
        presented = hostKeyFingerprint(key);
        return endpoint.hostKeys.includes(presented);
      };
      const fail = (error: Error & { level?: string; code?: string }) => {
        client.end();
        if (presented && !endpoint.hostKeys.includes(presented)) {
          reject(new SshConnectError(`${endpoint.host}:${endpoint.port} presented host key ${presented}, which is not pinned: the connection was refused`, true, presented));
        } else reject(describe(error, endpoint));
      };
      client.once('error', fail);
      client.once('ready', () => {
        client.off('error', fail);
        resolve(new SshLink(client, presented!));
      });
      client.connect(connectConfig(endpoint, timings, verify, privateKey));
      // Without it every small exchange (channel open, exec, exit) waits on Nagle and delayed ACKs.
      client.setNoDelay(true);
    });
  }

  /** The key the host presents, read during key exchange; nothing is authenticated or run. */
  static presentedKey(endpoint: Omit<SshEndpoint, 'hostKeys'>, timings: LinkTimings): Promise<{ fingerprint: string; type: string }> {
    return new Promise((resolve, reject) => {
      const client = new Client();
      let found: { fingerprint: string; type: string } | null = null;
      client.on('error', (error: Error & { level?: string; code?: string }) => {
        client.end();
        if (found) resolve(found);
        else reject(describe(error, { ...endpoint, hostKeys: [] }));
      });
      client.on('ready', () => {
        // An SSH server that lets anyone in without a key still showed its key first.
        client.end();
        if (found) resolve(found);
      });
      client.connect(
        connectConfig(
          { ...endpoint, hostKeys: [] },
          timings,
          (key) => {
            found = { fingerprint: hostKeyFingerprint(key), type: hostKeyType(key) };
            return false;
          },
          null,
        ),
      );
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  onClose(listener: (reason: string) => void): () => void {
    if (this.closed) {
      listener('the SSH connection closed');
      return () => undefined;
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Opens a session channel running `command` (no pty: the remote side sees pipes). */
  exec(command: string): Promise<ClientChannel> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('the SSH connection is closed'));
      this.client.exec(command, (error, channel) => (error ? reject(error) : resolve(channel)));
    });
  }

  /** Runs a short command to its end and answers its stdout (bounded), for probes and kills. */
  async run(command: string, timeoutMs: number): Promise<{ code: number | null; stdout: string }> {
    const channel = await this.exec(command);
    return new Promise((resolve, reject) => {
      let stdout = '';
      let code: number | null = null;
      const timer = setTimeout(() => {
        channel.close();
        reject(new Error(`the computer did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      channel.on('data', (chunk: Buffer) => {
        if (stdout.length < 64 * 1024) stdout += chunk.toString('utf8');
      });
      channel.stderr.resume();
      channel.on('exit', (exitCode: number | null) => (code = exitCode));
      channel.on('close', () => {
        clearTimeout(timer);
        resolve({ code, stdout });
      });
      channel.end();
    });
  }

  close(): void {
    this.client.end();
  }
}
