import type { ExecLimitName } from '@packetagent/contracts';
import type { DriverExit } from '../sandbox-driver';

/** Linux signal numbers: the container is Linux whatever the host running this service is. */
const LINUX_SIGNALS: Readonly<Record<number, string>> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  5: 'SIGTRAP',
  6: 'SIGABRT',
  7: 'SIGBUS',
  8: 'SIGFPE',
  9: 'SIGKILL',
  10: 'SIGUSR1',
  11: 'SIGSEGV',
  12: 'SIGUSR2',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
  16: 'SIGSTKFLT',
  17: 'SIGCHLD',
  18: 'SIGCONT',
  19: 'SIGSTOP',
  20: 'SIGTSTP',
  21: 'SIGTTIN',
  22: 'SIGTTOU',
  23: 'SIGURG',
  24: 'SIGXCPU',
  25: 'SIGXFSZ',
  26: 'SIGVTALRM',
  27: 'SIGPROF',
  28: 'SIGWINCH',
  29: 'SIGIO',
  30: 'SIGPWR',
  31: 'SIGSYS',
};

const LIMIT_OF_SIGNAL: Readonly<Record<string, ExecLimitName>> = {
  SIGXCPU: 'cpu_time',
  SIGXFSZ: 'file_size',
};

/**
 * How a container ended, from the status `wait` answered and the OOM flag `inspect` showed.
 * The engine (and the init in front of the command) reports death by signal N as 128 + N, so a
 * command that itself exits with such a status reads as killed: Docker cannot tell them apart.
 */
export function dockerExit(statusCode: number, oomKilled: boolean): DriverExit {
  const signal = statusCode > 128 ? LINUX_SIGNALS[statusCode - 128] : undefined;
  if (signal === undefined) return { exitCode: statusCode, signal: null, limit: oomKilled ? 'memory' : null };
  return { exitCode: null, signal, limit: oomKilled ? 'memory' : (LIMIT_OF_SIGNAL[signal] ?? null) };
}
