import { DEFAULT_EXEC_LIMITS } from '../sandbox.options';
import type { ExecRecord, ExecResult } from '@packetagent/contracts';
import { NO_OUTPUT } from './output-capture';


/**
 * How an exec ended whose replica stopped while it ran: its process tree died with the replica
 * (bubblewrap dies with its parent; a container is killed when its attach ends), and what it
 * wrote was not kept. Whether its effects happened is not known; the result says so.
 */
export function orphanResult(record: ExecRecord, now: Date, remoteKill: boolean | null = null): ExecResult {
  const remote = record.driver === 'ssh';
  return {
    execId: record.execId,
    workspaceId: record.workspaceId,
    runId: record.runId,
    driver: record.driver ?? 'bubblewrap',
    computer: record.computer,
    killConfirmed: null,
    // A command on a computer does not die with the replica that started it: it is lost, not killed.
    state: remote ? 'lost' : 'killed',
    exitCode: null,
    signal: null,
    limit: null,
    message: remote
      ? `the sandbox replica running it on ${record.computer} stopped: its output was not kept and whether it finished is not known; ${remoteKill ? 'its process group there was killed through a new connection' : 'it may still be running there'}`
      : 'the sandbox replica running it stopped: its process tree died with it, its output was not kept, and what it did before is not known',
    durationMs: Math.max(0, now.getTime() - Date.parse(record.startedAt)),
    stdout: NO_OUTPUT,
    stderr: NO_OUTPUT,
    egress: [],
    limits: DEFAULT_EXEC_LIMITS,
    unenforced: [],
    startedAt: record.startedAt,
    endedAt: now.toISOString(),
  };
}
