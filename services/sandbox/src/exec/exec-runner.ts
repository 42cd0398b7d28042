import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { execKey, TransientError, type ExecDriverName, type ValidationIssue, type ExecRecord, type EgressRecord, type ExecLimitName, type ExecLimits, type ExecResult, type ParsedExecRequest } from '@packetagent/contracts';
import type { PayloadStore } from '@packetagent/eventstore';
import type { DriverSelection } from '../drivers/driver-selection';
import type { ComputerExecs } from '../computers/computer-execs';
import { SSH_UNENFORCED } from '../computers/computer-execs';
import { DriverStartError, type DriverProcess } from '../drivers/sandbox-driver';
import type { ResolvedSandboxOptions } from '../sandbox.options';
import type { EgressFetcher } from './egress-fetch';
import type { ExecStore } from './exec-store';
import { LiveOutput } from './live-output';
import { NO_OUTPUT, OutputBudget, OutputCapture } from './output-capture';
import { checkExec, ExecRefusedError, normaliseCwd } from './prepare-exec';
import { workspaceFor } from './workspace-dirs';


function limitMessage(limit: ExecLimitName, limits: ExecLimits): string {
  switch (limit) {
    case 'wall_time':
      return `wall time limit of ${limits.wallTimeMs} ms reached: the process tree was killed`;
    case 'cpu_time':
      return `CPU time limit of ${limits.cpuSeconds} s reached`;
    case 'memory':
      return `memory limit of ${limits.memoryBytes} bytes reached: the kernel killed a process and the tree was ended`;
    case 'pids':
      return `process limit of ${limits.pids} reached: a fork was refused and the tree was ended`;
    case 'file_size':
      return `file size limit of ${limits.fileSizeBytes} bytes reached`;
    case 'output':
      return `output limit of ${limits.outputBytes} bytes reached: the process tree was killed and the output so far kept`;
    case 'cancelled':
      return 'cancelled: the process tree was killed';
  }
}

/**
 * Whether the exec is recorded as events of its own: everything but a run's tool call, which the
 * run's stream records (call, effect receipt, result).
 */
export function recordedAsEvents(request: Pick<ParsedExecRequest, 'runId' | 'requestedBy'>): boolean {
  return !(request.runId && request.requestedBy.kind === 'service' && request.requestedBy.id === 'supervisor');
}

/**
 * A `local` computer is this sandbox: its commands follow the sandbox's rules, which checkExec
 * left to the computer (a workspace-relative cwd, no secrets on the sandbox's command line).
 */
function localComputerCwd(request: ParsedExecRequest): string {
  const issues: ValidationIssue[] = [];
  const cwd = normaliseCwd(request.cwd);
  if (!cwd.ok) issues.push({ path: 'cwd', message: cwd.message });
  for (const name of Object.keys(request.secrets)) issues.push({ path: `secrets.${name}`, message: 'secrets reach commands only on an ssh computer whose policy allows them' });
  if (issues.length > 0 || !cwd.ok) throw new ExecRefusedError('the sandbox refused the command', issues);
  return cwd.cwd;
}

/** Where one exec runs: a local driver or a computer, with what it cannot enforce and how to start it. */
interface ExecTarget {
  driver: ExecDriverName;
  computer: string | null;
  unenforced: string[];
  cwd: string;
  start(scratch: string): Promise<DriverProcess>;
}

interface Running {
  promise: Promise<ExecResult>;
  cancel(): void;
}

/**
 * Runs one command to its end in the selected driver: checks it, fetches its declared egress,
 * starts it, holds it to every limit (wall time and output here, the rest in the driver), keeps
 * its output by reference and publishes it live, and records how it ended.
 */
export class ExecRunner {
  private readonly running = new Map<string, Running>();

  constructor(
    private readonly drivers: DriverSelection,
    private readonly store: ExecStore,
    private readonly payloads: PayloadStore,
    private readonly egress: EgressFetcher,
    private readonly nats: { nc: NatsConnection | null; prefix: string },
    private readonly options: ResolvedSandboxOptions,
    private readonly computers: ComputerExecs | null = null,
  ) {}

  /** The computer the request names (null for a `local` one), or this host's sandbox driver. */
  private async target(request: ParsedExecRequest, checked: ReturnType<typeof checkExec>): Promise<ExecTarget> {
    const remote = request.computer ? await this.requireComputers().prepare(request) : null;
    if (remote) {
      return {
        driver: 'ssh',
        computer: remote.record.name,
        unenforced: SSH_UNENFORCED,
        cwd: remote.cwd,
        start: async () => {
          const process = await remote.start(checked.argv, { ...request.env, ...request.secrets }, checked.limits);
          // Without it a replica that dies cannot have the group killed by another; the command still runs.
          if (process.pgid !== null) {
            await this.store.remoteStarted(request.workspaceId, request.execId, process.pgid).catch((error: unknown) => this.options.log('warn', 'sandbox: the process group of a command on a computer was not recorded', { execId: request.execId, error: error instanceof Error ? error.message : String(error) }));
          }
          return process;
        },
      };
    }
    const cwd = request.computer ? localComputerCwd(request) : checked.cwd;
    const { driver, probe } = await this.drivers.current();
    const workspaceDir = await workspaceFor(request, cwd, this.options);
    return {
      driver: driver.name,
      computer: request.computer?.name ?? null,
      unenforced: probe.unenforced,
      cwd,
      start: (scratch) => driver.start({ execId: request.execId, argv: checked.argv, workspaceDir, cwd, env: checked.env, limits: checked.limits, egressDir: request.egress.length > 0 ? scratch : null }),
    };
  }

  private requireComputers(): ComputerExecs {
    if (!this.computers) throw new DriverStartError('this sandbox has no computer registry');
    return this.computers;
  }

  /**
   * Runs the request, or answers the exec already under its id. `earlier` is the exec's record
   * when the caller has just read it (null: none), so it is not read twice.
   */
  async run(request: ParsedExecRequest, earlier?: ExecRecord | null): Promise<ExecResult> {
    const checked = checkExec(request, this.options);
    const key = `${request.workspaceId}/${request.execId}`;
    const joined = await this.existing(request, key, earlier);
    if (joined) return joined;
    const target = await this.target(request, checked);
    const startedAt = new Date();
    const audited = recordedAsEvents(request);
    const audit = audited
      ? { execId: request.execId, runId: request.runId ?? null, argv: checked.argv, cwd: target.cwd, envNames: Object.keys(request.env).sort(), limits: checked.limits, driver: target.driver, egress: request.egress.map((file) => file.url) }
      : null;
    const recorded = await this.store.start({ workspaceId: request.workspaceId, execId: request.execId, runId: request.runId ?? null, argv: checked.argv, cwd: target.cwd, driver: target.driver, computer: target.computer, requestedBy: request.requestedBy, replica: this.options.replicaId, startedAt }, audit);
    if (!recorded) return (await this.existing(request, key)) ?? Promise.reject(new TransientError(`exec ${request.execId} was just started elsewhere`));

    let cancel: (limit: ExecLimitName) => void = () => undefined;
    let cancelled = false;
    const running: Running = {
      promise: Promise.resolve(null as unknown as ExecResult),
      cancel: () => {
        cancelled = true;
        cancel('cancelled');
      },
    };
    this.running.set(key, running);
    const live = new LiveOutput(this.nats.nc, this.nats.prefix, request.workspaceId, request.execId);
    running.promise = (async () => {
      const base = { execId: request.execId, workspaceId: request.workspaceId, runId: request.runId ?? null, driver: target.driver, computer: target.computer, limits: checked.limits, unenforced: target.unenforced, startedAt: startedAt.toISOString() };
      const ended = (fields: Pick<ExecResult, 'state' | 'exitCode' | 'signal' | 'limit' | 'message' | 'stdout' | 'stderr' | 'egress'> & { killConfirmed?: boolean | null }): ExecResult => {
        const endedAt = new Date();
        return { killConfirmed: null, ...base, ...fields, durationMs: endedAt.getTime() - startedAt.getTime(), endedAt: endedAt.toISOString() };
      };
      const scratch = join(this.options.scratchDir, `${execKey(request.execId)}-egress`);
      let result: ExecResult;
      try {
        let egress: EgressRecord[] = [];
        if (request.egress.length > 0) {
          await mkdir(scratch, { recursive: true, mode: 0o755 });
          const fetching = new AbortController();
          cancel = () => fetching.abort();
          try {
            egress = await this.egress.fetch(request.egress, scratch, fetching.signal);
          } catch (error) {
            return ended({ state: 'failed', exitCode: null, signal: null, limit: cancelled ? 'cancelled' : null, message: `declared egress could not be fetched: ${error instanceof Error ? error.message : String(error)}`, stdout: NO_OUTPUT, stderr: NO_OUTPUT, egress: [] });
          }
        }
        if (cancelled) return ended({ state: 'killed', exitCode: null, signal: null, limit: 'cancelled', message: limitMessage('cancelled', checked.limits), stdout: NO_OUTPUT, stderr: NO_OUTPUT, egress });

        let proc: DriverProcess;
        try {
          proc = await target.start(scratch);
        } catch (error) {
          if (!(error instanceof DriverStartError)) throw error;
          return ended({ state: 'failed', exitCode: null, signal: null, limit: null, message: error.message, stdout: NO_OUTPUT, stderr: NO_OUTPUT, egress });
        }
        live.started(checked.argv, target.driver);
        let limit: ExecLimitName | null = null;
        cancel = (hit) => {
          limit ??= hit;
          void proc.kill();
        };
        proc.onLimit((hit) => cancel(hit));
        // A cancel that came while the driver was starting the command ends it now.
        if (cancelled) cancel('cancelled');
        const budget = new OutputBudget(checked.limits.outputBytes, () => cancel('output'));
        const store = { payloads: this.payloads, workspaceId: request.workspaceId };
        const stdout = new OutputCapture(proc.stdout, budget, store, this.options.previewBytes, (text) => live.output('stdout', text));
        const stderr = new OutputCapture(proc.stderr, budget, store, this.options.previewBytes, (text) => live.output('stderr', text));
        const deadline = setTimeout(() => cancel('wall_time'), checked.limits.wallTimeMs);
        const exit = await proc.exited.finally(() => clearTimeout(deadline));
        const [out, err] = await Promise.all([stdout.finish(), stderr.finish()]);
        const named = limit ?? exit.limit;
        result = exit.lost
          ? ended({
              state: 'lost',
              exitCode: null,
              signal: null,
              limit: named,
              message: `${exit.lost} while the command ran on ${target.computer}: whether it finished is not known${exit.killConfirmed ? '; its process group was killed through a new connection' : exit.killConfirmed === false ? '; its process group could not be confirmed gone' : ''}`,
              stdout: out,
              stderr: err,
              egress,
              killConfirmed: exit.killConfirmed ?? null,
            })
          : ended({
              state: named ? 'killed' : 'exited',
              exitCode: exit.exitCode,
              signal: exit.signal,
              limit: named,
              message: named ? limitMessage(named, checked.limits) : null,
              stdout: out,
              stderr: err,
              egress,
              killConfirmed: exit.killConfirmed ?? null,
            });
        return result;
      } finally {
        await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
      }
    })()
      .catch((error: unknown) => {
        // Whatever went wrong, the record says the exec ended and how.
        const endedAt = new Date();
        const message = `the sandbox failed: ${error instanceof Error ? error.message : String(error)}`;
        this.options.log('error', 'sandbox exec failed', { execId: request.execId, error: message });
        return { execId: request.execId, workspaceId: request.workspaceId, runId: request.runId ?? null, driver: target.driver, computer: target.computer, state: 'failed' as const, exitCode: null, signal: null, limit: null, message, durationMs: endedAt.getTime() - startedAt.getTime(), stdout: NO_OUTPUT, stderr: NO_OUTPUT, egress: [], limits: checked.limits, unenforced: target.unenforced, killConfirmed: null, startedAt: startedAt.toISOString(), endedAt: endedAt.toISOString() };
      })
      .then(async (result) => {
        // The record first: a stream opened once `ended` is out must find the exec ended.
        await this.store.finish(result, audited ? { actor: request.requestedBy } : null).finally(() => live.ended(result));
        return result;
      })
      .finally(() => this.running.delete(key));
    return running.promise;
  }

  /** Kills the exec if this replica runs it. */
  cancel(workspaceId: string, execId: string): boolean {
    const running = this.running.get(`${workspaceId}/${execId}`);
    running?.cancel();
    return running !== undefined;
  }

  isRunning(workspaceId: string, execId: string): boolean {
    return this.running.has(`${workspaceId}/${execId}`);
  }

  /** Kills everything this replica runs (shutdown); each exec still records how it ended. */
  async cancelAll(): Promise<void> {
    const all = [...this.running.values()];
    for (const running of all) running.cancel();
    await Promise.allSettled(all.map((running) => running.promise));
  }

  /** A repeat of an exec id: the recorded result, or the run in progress here. */
  private async existing(request: ParsedExecRequest, key: string, earlier?: ExecRecord | null): Promise<ExecResult | null> {
    const here = this.running.get(key);
    if (here) return here.promise;
    const record = earlier === undefined ? await this.store.get(request.workspaceId, request.execId) : earlier;
    if (!record) return null;
    if (record.result) return record.result;
    throw new TransientError(`exec ${request.execId} is still running on another sandbox replica`);
  }
}
