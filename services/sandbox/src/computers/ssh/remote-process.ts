import { PassThrough } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import type { ExecLimitName } from '@packetagent/contracts';
import { DriverStartError, type DriverExit, type DriverProcess } from '../../drivers/sandbox-driver';
import { environmentBlock, killGroupCommandLine, REMOTE_MARKER, remoteCommandLine, type RemoteCommand } from './remote-script';
import type { SshLink } from './ssh-link';

/** How a command on a computer ended: a local driver's exit, plus what only a remote link can lose. */
export interface RemoteExit extends DriverExit {
  /** The link broke before the command's exit status arrived: why, in words. Its outcome is not known. */
  lost: string | null;
  /** After a kill or a loss: whether its process group was seen gone. Null when nothing had to be killed. */
  killConfirmed: boolean | null;
}

export interface RemoteProcess extends DriverProcess {
  readonly exited: Promise<RemoteExit>;
  /** Null when the link broke before the command was seen to start. */
  readonly pgid: number | null;
}

/** Signals the shell's own limits raise, named as the limits they are. */
const SIGNAL_LIMITS: Readonly<Record<string, ExecLimitName>> = { XCPU: 'cpu_time', XFSZ: 'file_size' };

const KILL_TIMEOUT_MS = 10_000;

/** Kills a process group over a link; true when it is gone, false when something of it survived. */
export async function killGroup(link: SshLink, pgid: number): Promise<boolean> {
  const { stdout } = await link.run(killGroupCommandLine(pgid), KILL_TIMEOUT_MS);
  return stdout.trim() === 'gone';
}

/**
 * Starts the command on the computer and resolves once the wrapper said it started (its process
 * group is then known), or rejects with DriverStartError when the wrapper refused (cwd outside
 * the roots) or the channel could not be opened. `relink` opens a fresh connection for a kill
 * after the link was lost.
 */
export async function startRemote(link: SshLink, command: RemoteCommand, env: Readonly<Record<string, string>>, relink: () => Promise<SshLink>): Promise<RemoteProcess> {
  let channel: ClientChannel;
  try {
    channel = await link.exec(remoteCommandLine(command));
  } catch (error) {
    throw new DriverStartError(`the computer did not open a session: ${error instanceof Error ? error.message : String(error)}`);
  }
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  channel.pipe(stdout);

  const status: { seen: boolean; code: number | null; signal: string | null } = { seen: false, code: null, signal: null };
  channel.on('exit', (code: number | null, signalName?: string) => {
    status.seen = true;
    status.code = typeof code === 'number' ? code : null;
    status.signal = signalName ? `SIG${signalName}` : null;
  });

  let lostReason: string | null = null;
  const stopWatching = link.onClose((reason) => (lostReason ??= reason));
  const closed = new Promise<void>((resolve) => channel.on('close', () => resolve()));

  // null: the link broke before the wrapper said it started, so whether the command runs is not known.
  const started = new Promise<number | null>((resolve, reject) => {
    let pending = '';
    let found = false;
    channel.stderr.on('data', (chunk: Buffer) => {
      if (found) return void stderr.write(chunk);
      pending += chunk.toString('latin1');
      const at = pending.indexOf(REMOTE_MARKER);
      const lineEnd = at >= 0 ? pending.indexOf('\n', at) : -1;
      if (lineEnd < 0) return;
      found = true;
      // What a login shell printed before the wrapper ran is the command's stderr too.
      if (at > 0) stderr.write(Buffer.from(pending.slice(0, at), 'latin1'));
      const line = Buffer.from(pending.slice(at + REMOTE_MARKER.length, lineEnd), 'latin1').toString('utf8');
      const rest = pending.slice(lineEnd + 1);
      if (rest) stderr.write(Buffer.from(rest, 'latin1'));
      const pgid = /^started (\d+)$/.exec(line);
      if (pgid) resolve(Number(pgid[1]));
      else reject(new DriverStartError(line.startsWith('refused ') ? line.slice('refused '.length) : `the computer answered ${line}`));
    });
    channel.stderr.on('end', () => stderr.end());
    const ended = () => {
      if (found) return;
      if (lostReason) return resolve(null);
      reject(new DriverStartError(`the session ended before the command started${status.seen ? ` (exit ${status.code ?? status.signal})` : ''}: is /bin/sh there?`));
    };
    void closed.then(ended);
    link.onClose(() => setImmediate(ended));
  });
  // With a stdin the channel stays open for the program after its environment; otherwise it ends there.
  if (command.stdin) channel.write(environmentBlock(env));
  else channel.end(environmentBlock(env));

  let pgid: number | null;
  try {
    pgid = await started;
  } catch (error) {
    stopWatching();
    channel.close();
    throw error;
  }

  let killConfirmed: boolean | null = null;
  let killing: Promise<void> | null = null;
  const killTree = (): Promise<void> =>
    (killing ??= (async () => {
      if (pgid === null) return;
      const via = link.isClosed ? await relink() : link;
      try {
        killConfirmed = await killGroup(via, pgid);
      } finally {
        if (via !== link) via.close();
      }
    })().catch(() => {
      killConfirmed = false;
    }));

  const limitListeners: Array<(limit: ExecLimitName) => void> = [];
  const exited = (async (): Promise<RemoteExit> => {
    await Promise.race([closed, new Promise<void>((resolve) => link.onClose(() => resolve()))]);
    stopWatching();
    if (!status.seen) {
      const reason = lostReason ?? 'the session closed without an exit status';
      // Its outcome stays unknown; what may still run of it is killed through a fresh link if one opens.
      await killTree();
      stdout.end();
      stderr.end();
      return { exitCode: null, signal: null, limit: null, lost: pgid === null ? `${reason} before the command was seen to start` : reason, killConfirmed };
    }
    if (killing) await killing;
    const limit = status.signal ? (SIGNAL_LIMITS[status.signal.replace(/^SIG/, '')] ?? null) : null;
    return { exitCode: status.code, signal: status.signal, limit, lost: null, killConfirmed };
  })();

  return {
    stdin: command.stdin ? channel : null,
    stdout,
    stderr,
    exited,
    pgid,
    kill: () => killTree(),
    onLimit: (listener) => void limitListeners.push(listener),
  };
}
