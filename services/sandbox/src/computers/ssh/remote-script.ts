import { posix } from 'node:path';

/** First bytes of the wrapper's own line on stderr; a command's output never starts the stream before it. */
export const REMOTE_MARKER = '\u001epacketagent:';

/** Exit status of the wrapper when it refused to start the command (the marker line says why). */
export const REMOTE_REFUSED_STATUS = 125;

/** One POSIX shell word that stands for exactly `value`. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The wrapper run by `/bin/sh` on the computer. It enters the cwd, refuses unless its real path
 * (symlinks resolved) is inside one of the roots, reads the environment from stdin (`NAME=base64`
 * lines up to an empty one, so no value is ever on a command line `ps` shows), applies the limits
 * a shell can, says which process group to kill, and becomes the command. sshd made the shell a
 * session and group leader, and `exec` keeps that pid, so the whole tree is that group.
 */
const WRAPPER = [
  'cwd=$1; n=$2; cpu=$3; fsize=$4; files=$5; stdin=$6; shift 6',
  `refuse() { printf '${REMOTE_MARKER}refused %s\\n' "$1" >&2; exit ${REMOTE_REFUSED_STATUS}; }`,
  'cd -- "$cwd" 2>/dev/null || refuse "the directory $cwd does not exist on this computer"',
  'unset OLDPWD',
  'real=$(pwd -P)',
  'inside=',
  'while [ "$n" -gt 0 ]; do',
  '  root=$1; shift; n=$((n - 1))',
  '  rr=$(cd -- "$root" 2>/dev/null && pwd -P) || continue',
  '  case "$real/" in "${rr%/}"/*) inside=1 ;; esac',
  'done',
  '[ "$1" = -- ] && shift',
  `[ -n "$inside" ] || refuse "$cwd resolves to $real, outside the computer's roots"`,
  'while IFS= read -r line && [ -n "$line" ]; do',
  '  command -v base64 >/dev/null 2>&1 || refuse "base64 is missing on this computer"',
  '  value=$(printf %s "${line#*=}" | base64 -d; printf x)',
  '  export "${line%%=*}=${value%x}"',
  'done',
  'ulimit -t "$cpu" 2>/dev/null; ulimit -f "$fsize" 2>/dev/null; ulimit -n "$files" 2>/dev/null',
  `printf '${REMOTE_MARKER}started %s\\n' "$$" >&2`,
  // `read` takes stdin a byte at a time, so what follows the environment is the program's own.
  'if [ "$stdin" = keep ]; then exec "$@"; else exec "$@" </dev/null; fi',
].join('\n');

export interface RemoteCommand {
  argv: readonly string[];
  /** Absolute on the computer. */
  cwd: string;
  roots: readonly string[];
  cpuSeconds: number;
  fileSizeBytes: number;
  openFiles: number;
  /** Keep the channel's input as the program's stdin after the environment (an MCP server's requests); otherwise it reads /dev/null. */
  stdin?: boolean;
}

/**
 * The command line sent to sshd: a clean environment (only PATH, HOME, USER, LOGNAME and LANG of
 * the login survive), then the wrapper. The user's login shell parses it, so it is plain POSIX.
 */
export function remoteCommandLine(command: RemoteCommand): string {
  const words = [
    command.cwd,
    String(command.roots.length),
    String(command.cpuSeconds),
    // ulimit -f counts 512-byte blocks.
    String(Math.max(1, Math.floor(command.fileSizeBytes / 512))),
    String(command.openFiles),
    command.stdin ? 'keep' : 'null',
    ...command.roots,
    '--',
    ...command.argv,
  ];
  return [
    'exec env -i PATH="$PATH" HOME="$HOME" USER="$USER" LOGNAME="$LOGNAME" LANG=C.UTF-8',
    '/bin/sh -c',
    shellQuote(WRAPPER),
    'packetagent',
    ...words.map(shellQuote),
  ].join(' ');
}

/** The environment block the wrapper reads from stdin. */
export function environmentBlock(env: Readonly<Record<string, string>>): string {
  return `${Object.entries(env)
    .map(([name, value]) => `${name}=${Buffer.from(value, 'utf8').toString('base64')}\n`)
    .join('')}\n`;
}

/**
 * Kills a process group and says whether it is gone: `gone` once no process is left in it,
 * `alive` when one still is after ~5 s (a process that made a session of its own escapes it).
 */
export function killGroupCommandLine(pgid: number): string {
  if (!Number.isInteger(pgid) || pgid <= 1) throw new Error(`not a process group: ${pgid}`);
  // `kill -s NAME --` is the form every POSIX shell's kill takes (dash refuses `kill -0 --`).
  return `/bin/sh -c ${shellQuote(`kill -s KILL -- -${pgid} 2>/dev/null; i=0; while kill -s 0 -- -${pgid} 2>/dev/null; do i=$((i + 1)); [ $i -gt 50 ] && { echo alive; exit 0; }; sleep 0.1 2>/dev/null || sleep 1; done; echo gone`)}`;
}

/** The cwd on the computer: absolute as given, or relative to the first root; normalised, never with NUL. */
export function remoteCwd(raw: string, roots: readonly string[]): { ok: true; cwd: string } | { ok: false; message: string } {
  if (raw.includes('\0')) return { ok: false, message: 'contains a NUL character' };
  const first = roots[0];
  if (!first) return { ok: false, message: 'the computer has no roots to work in' };
  const cwd = posix.normalize(raw.startsWith('/') ? raw : posix.join(first, raw === '' ? '.' : raw)).replace(/(.)\/+$/, '$1');
  const inside = roots.some((root) => cwd === root || cwd.startsWith(root === '/' ? '/' : `${root}/`));
  if (!inside) return { ok: false, message: `${cwd} is outside the computer's roots (${roots.join(', ')})` };
  return { ok: true, cwd };
}
