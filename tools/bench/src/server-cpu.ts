/**
 * CPU accounting that also covers the Postgres and NATS servers, read from /proc: where a path
 * spends its time in the servers rather than in the app.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { testEnv, type TestDatabase } from '@packetagent/testing';
import { cpuFrom, type App, type CpuUse } from './app-process';
import { now } from './stats';

/** Cores busy in a stretch, with the Postgres server (all its processes) and the NATS server; null where /proc is not readable. */
export interface CpuWithServers extends CpuUse {
  postgres: number | null;
  nats: number | null;
}

function readProcStat(pid: number): { comm: string; ppid: number; utime: number; stime: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command may hold spaces; the fields after its closing parenthesis do not.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return { comm: text.slice(text.indexOf('(') + 1, close), ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]) };
}

const procPids = (): number[] => readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number);

/** CPU seconds of the processes `pids` answers: utime + stime, in clock ticks of 1/100 s. */
function procCpuSeconds(pids: () => number[]): number | null {
  try {
    let ticks = 0;
    for (const pid of pids()) {
      const stat = readProcStat(pid);
      if (stat) ticks += stat.utime + stat.stime;
    }
    return ticks / 100;
  } catch {
    return null;
  }
}

/**
 * The Postgres server the benchmark uses (its postmaster, found as a backend's parent, and every
 * child of it, so backends that come later count too) and the nats-server on the benchmark's port.
 */
async function serverPids(db: TestDatabase): Promise<{ postgres: () => number[]; nats: () => number[] }> {
  const { rows } = await db.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const postmaster = readProcStat(rows[0]!.pid)?.ppid ?? -1;
  const natsPort = new URL(testEnv.natsUrl.split(',')[0]!).port || '4222';
  let natsPids: number[] = [];
  try {
    natsPids = procPids().filter((pid) => {
      if (readProcStat(pid)?.comm !== 'nats-server') return false;
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = args.findIndex((arg) => arg === '-p' || arg === '--port');
      return (at >= 0 ? args[at + 1] : '4222') === natsPort;
    });
  } catch {
    // No /proc: the server columns stay empty.
  }
  return {
    postgres: () => (postmaster > 0 ? [postmaster, ...procPids().filter((pid) => readProcStat(pid)?.ppid === postmaster)] : []),
    nats: () => natsPids,
  };
}

/** cpuFrom, with the Postgres server of `db` and the NATS server. */
export async function cpuWithServersFrom(db: TestDatabase, apps: Pick<App, 'baseUrl'> | readonly Pick<App, 'baseUrl'>[] | null): Promise<() => Promise<CpuWithServers>> {
  const pids = await serverPids(db);
  const started = now();
  const postgresStart = procCpuSeconds(pids.postgres);
  const natsStart = procCpuSeconds(pids.nats);
  const cpu = await cpuFrom(apps);
  return async () => {
    const use = await cpu();
    const seconds = (now() - started) / 1_000;
    const postgresEnd = procCpuSeconds(pids.postgres);
    const natsEnd = procCpuSeconds(pids.nats);
    return {
      ...use,
      postgres: postgresStart !== null && postgresEnd !== null ? (postgresEnd - postgresStart) / seconds : null,
      nats: natsStart !== null && natsEnd !== null && pids.nats().length > 0 ? (natsEnd - natsStart) / seconds : null,
    };
  };
}

/** Cores busy over several stretches of a phase, weighted by their lengths. */
export function combineCpu(parts: { cpu: CpuWithServers; seconds: number }[]): CpuWithServers {
  const seconds = parts.reduce((sum, part) => sum + part.seconds, 0);
  const weigh = (pick: (cpu: CpuWithServers) => number | null): number | null => {
    let total = 0;
    for (const part of parts) {
      const value = pick(part.cpu);
      if (value === null) return null;
      total += value * part.seconds;
    }
    return total / seconds;
  };
  return {
    machine: weigh((cpu) => cpu.machine),
    app: weigh((cpu) => cpu.app),
    bench: weigh((cpu) => cpu.bench) ?? Number.NaN,
    postgres: weigh((cpu) => cpu.postgres),
    nats: weigh((cpu) => cpu.nats),
  };
}
