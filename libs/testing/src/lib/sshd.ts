import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { exitOf, freePort } from './processes';
import { eventually } from './wait';

const SSHD = '/usr/sbin/sshd';

/** Whether OpenSSH's server is installed here (Debian's openssh-server; .ci/run installs it). */
export function sshdAvailable(): boolean {
  return existsSync(SSHD) && existsSync('/usr/bin/ssh-keygen');
}

function keygen(path: string, comment: string): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', path], { stdio: 'ignore' });
}

/** `SHA256:...` of a public key file, as `ssh-keygen -lf` prints it. */
export function fingerprintOf(publicKeyPath: string): string {
  const line = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', publicKeyPath], { encoding: 'utf8' });
  const found = /SHA256:[A-Za-z0-9+/]{43}/.exec(line);
  if (!found) throw new Error(`no fingerprint in ${line}`);
  return found[0];
}

/**
 * An OpenSSH server of the test's own on a loopback port: its own host key, one authorized client
 * key (for the user the tests run as), no password logins. It can be stopped and started again on
 * the same port, have its host key replaced, and have its sessions killed.
 */
export class SshdProcess {
  private child: ChildProcess | null = null;
  readonly user = userInfo().username;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<SshdProcess> {
    const dir = await mkdtemp(join(tmpdir(), 'packetagent-sshd-'));
    const sshd = new SshdProcess(dir, await freePort());
    keygen(join(dir, 'host_ed25519'), 'host');
    keygen(join(dir, 'client_ed25519'), 'client');
    await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client_ed25519.pub')), { mode: 0o600 });
    await writeFile(
      join(dir, 'sshd_config'),
      [
        `Port ${sshd.port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${join(dir, 'host_ed25519')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        'UsePAM no',
        'PermitUserEnvironment no',
        'AcceptEnv none',
        'X11Forwarding no',
        'AllowTcpForwarding no',
        'MaxSessions 64',
        'MaxStartups 64',
        'LogLevel ERROR',
        '',
      ].join('\n'),
    );
    return sshd;
  }

  /** The client's private key (OpenSSH format), as an operator stores it in the vault. */
  privateKey(): Promise<string> {
    return readFile(join(this.dir, 'client_ed25519'), 'utf8');
  }

  hostFingerprint(): string {
    return fingerprintOf(join(this.dir, 'host_ed25519.pub'));
  }

  async start(): Promise<void> {
    // sshd refuses to start unless its privilege-separation directory exists.
    execFileSync('mkdir', ['-p', '/run/sshd']);
    this.child = spawn(SSHD, ['-D', '-e', '-f', join(this.dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    this.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const child = this.child;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`sshd exited: ${stderr}`);
        return new Promise<boolean>((resolve, reject) => {
          const socket = connect(this.port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', reject);
        });
      },
      { timeoutMs: 15_000, intervalMs: 50 },
    );
  }

  /** Stops the listener; sessions already open go on (as a restart of sshd leaves them). */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    await exitOf(child);
  }

  /** Kills every session process of this server (the per-connection sshd children), cutting the link mid-command. */
  killSessions(): void {
    const listener = this.child?.pid;
    const pids = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .filter((match) => Number(match[2]) === listener)
      .map((match) => Number(match[1]));
    for (const pid of pids) process.kill(pid, 'SIGKILL');
  }

  /** A new host key in place of the old (the server must be restarted to present it). */
  rotateHostKey(): void {
    execFileSync('rm', ['-f', join(this.dir, 'host_ed25519'), join(this.dir, 'host_ed25519.pub')]);
    keygen(join(this.dir, 'host_ed25519'), 'host');
  }

  async dispose(): Promise<void> {
    this.killSessions();
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
