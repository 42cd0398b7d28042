// Recovery after SIGKILL of the process holding a run mid model call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStreamId } from '@packetagent/contracts';
import { eventually, type TestDatabase } from '@packetagent/testing';
import { firstRunSetup, spawnApp, startInfrastructure, type AppProcess } from './app-process';
import { deploy, FINISH_TURN, startRun, TERMINAL_TYPES, writeScript } from './execution-workers';
import { now, sleep, summarise, type Summary } from './stats';

export interface RecoverySetting {
  /** PACKETAGENT_SUPERVISOR_LEASE_MS: how long a claim lasts without renewal. */
  leaseMs: number;
  /** PACKETAGENT_SUPERVISOR_RECOVERY_INTERVAL_MS: how often lapsed claims are looked for. */
  recoveryIntervalMs: number;
}

export interface RecoverySample {
  /** The holder's lease when it was killed, from the kill: how long the claim still had to run. */
  leaseLeftMs: number;
  /** Kill to run.claimed by the other process. */
  claimedMs: number;
  /** Lease expiry to run.claimed: how long the lapse went unnoticed. */
  claimedAfterLapseMs: number;
  /** Kill to the run's terminal event. */
  terminalMs: number;
}

export interface RecoveryResults extends RecoverySetting {
  samples: RecoverySample[];
  claimedMs: Summary;
  terminalMs: Summary;
  /** A new process's start to ready, for the processes started during the phase. */
  processStartMs: Summary;
}


const HOLD_MS = 60_000;
/** Steps of (k * GOLDEN) % 1 spread evenly over [0, 1) whatever the number of rounds, and apart from (k + 0.5) / n. */
const GOLDEN = 0.618_033_988_75;

/**
 * Each round: the only live process claims a run whose model call is scripted to take 60 s;
 * a second process starts, whose script for the same turn answers at once; the holder is
 * SIGKILLed, and the second process must notice the lapsed claim and finish the run. The
 * survivor holds the next round's run (its script file is rewritten to the slow one; scripts
 * are read at every call), so each round starts one process.
 */
export async function benchRecovery(setting: RecoverySetting, repeats: number): Promise<RecoveryResults> {
  const infra = await startInfrastructure();
  const env = {
    PACKETAGENT_SUPERVISOR_LEASE_MS: String(setting.leaseMs),
    PACKETAGENT_SUPERVISOR_RECOVERY_INTERVAL_MS: String(setting.recoveryIntervalMs),
  };
  const dirs: string[] = [];
  const scriptsDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-bench-scripts-'));
    dirs.push(dir);
    return dir;
  };
  const processStarts: number[] = [];
  const start = async (name: string, dir: string): Promise<AppProcess> => {
    const t0 = now();
    const app = await spawnApp(infra, name, { ...env, PACKETAGENT_SCRIPTS_DIR: dir });
    processStarts.push(now() - t0);
    return app;
  };
  let holder: { app: AppProcess; dir: string } | null = null;
  let survivor: AppProcess | null = null;
  try {
    const firstDir = scriptsDir();
    holder = { app: await start('process 0', firstDir), dir: firstDir };
    const owner = { baseUrl: holder.app.baseUrl, ...(await firstRunSetup(holder.app.baseUrl, infra.setupToken)) };
    const [deploymentId] = await deploy(owner, 'bench-hold', 1);
    const samples: RecoverySample[] = [];
    for (let round = 0; round < repeats; round++) {
      // Priced, so the reservation marks the start of the model call.
      writeScript(holder.dir, 'bench-hold', [{ ...FINISH_TURN, text: 'thinking', delayMs: HOLD_MS }], 'priced');
      const runId = await startRun(holder.app.baseUrl, owner, deploymentId!);
      // The reservation comes right before the model call: from then on the holder is waiting on the model.
      await eventually(async () => (await budgetReserved(infra.db, runId)) > 0, { timeoutMs: 30_000, intervalMs: 20, what: `run ${runId} to reach its model call` });
      const dir = scriptsDir();
      writeScript(dir, 'bench-hold', [FINISH_TURN], 'priced');
      // Each process sweeps on its own timer, started when it boots: spread the survivor's start
      // over a sweep interval, so the rounds see its sweeps at different points after the lapse.
      await sleep(((((round + 0.5) * GOLDEN) % 1) * setting.recoveryIntervalMs));
      survivor = await start(`process ${round + 1}`, dir);
      // The holder renews its lease every third of it: spread the kills over that cycle, so the
      // rounds see leases with much and with little left to run.
      await sleep(((round + 0.5) / repeats) * (setting.leaseMs / 3));

      const killedAt = Date.now();
      await holder.app.kill();
      const claim = await claimOf(infra.db, runId);
      if (claim.claims !== 1 || claim.leaseUntil === null) throw new Error(`run ${runId} was claimed ${claim.claims} times before the kill; the benchmark needs its first holder to be the killed one`);
      const timeoutMs = setting.leaseMs + setting.recoveryIntervalMs + 60_000;
      const ended = await eventually(async () => (await runTimes(infra.db, runId)) ?? false, { timeoutMs, intervalMs: 20, what: `run ${runId} to be taken over and end` });
      if (ended.terminalType !== 'run.succeeded') throw new Error(`run ${runId} ended ${ended.terminalType} after the takeover, expected run.succeeded`);
      if (ended.claims.length !== 2 || ended.claims[0]!.replica === ended.claims[1]!.replica) {
        throw new Error(`run ${runId} was claimed by ${ended.claims.map((c) => c.replica).join(', ')}; expected the holder, then the other process`);
      }
      const claimedAt = ended.claims[1]!.at;
      samples.push({
        leaseLeftMs: claim.leaseUntil - killedAt,
        claimedMs: claimedAt - killedAt,
        claimedAfterLapseMs: claimedAt - claim.leaseUntil,
        terminalMs: ended.terminalAt - killedAt,
      });
      holder = { app: survivor, dir };
      survivor = null;
    }
    return {
      ...setting,
      samples,
      claimedMs: summarise(samples.map((sample) => sample.claimedMs)),
      terminalMs: summarise(samples.map((sample) => sample.terminalMs)),
      processStartMs: summarise(processStarts),
    };
  } finally {
    await (survivor as AppProcess | null)?.stop();
    await (holder as { app: AppProcess } | null)?.app.stop();
    await infra.cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

async function budgetReserved(db: TestDatabase, runId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'budget.reserved' AND data->>'runId' = $1`, [runId]);
  return Number(rows[0]!.n);
}

/** The run's claim row, read after the kill: the lease the dead holder last renewed. */
async function claimOf(db: TestDatabase, runId: string): Promise<{ claims: number; leaseUntil: number | null }> {
  const { rows } = await db.pool.query<{ claims: number; lease_until: number | null }>(
    `SELECT claims, extract(epoch FROM lease_until)::float8 * 1000 AS lease_until FROM supervisor.runs WHERE run_id = $1`,
    [runId],
  );
  return { claims: rows[0]?.claims ?? 0, leaseUntil: rows[0]?.lease_until ?? null };
}

/** The run's claims and terminal event, once it has a terminal event. */
async function runTimes(db: TestDatabase, runId: string): Promise<{ claims: { replica: string; at: number }[]; terminalType: string; terminalAt: number } | null> {
  const { rows } = await db.pool.query<{ type: string; at: number; replica: string | null }>(
    `SELECT type, extract(epoch FROM occurred_at)::float8 * 1000 AS at, data->>'replica' AS replica
       FROM events WHERE stream_id = $1 AND (type = 'run.claimed' OR type = ANY($2)) ORDER BY stream_version`,
    [runStreamId(runId), TERMINAL_TYPES],
  );
  const terminal = rows.find((row) => TERMINAL_TYPES.includes(row.type));
  if (!terminal) return null;
  return {
    claims: rows.filter((row) => row.type === 'run.claimed').map((row) => ({ replica: row.replica ?? '', at: row.at })),
    terminalType: terminal.type,
    terminalAt: terminal.at,
  };
}
