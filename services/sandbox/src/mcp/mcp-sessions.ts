import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, execKey, sha256Hex, type JsonValue, type McpCallRequest, type McpCallResult, type McpListResult, type ParsedMcpServerSpec } from '@packetagent/contracts';
import type { ResolvedSandboxOptions } from '../sandbox.options';
import type { RunKey } from '../replicas/run-holders';
import { McpSession, type SessionContext } from './mcp-session';

export type { McpCallRequest };

interface RunSessions {
  key: RunKey;
  sessions: Map<string, McpSession>;
  /** Calls still running, and when the last one ended (performance.now()). */
  running: number;
  lastUsed: number;
  /** Each call's answer by its key, for as long as the run's sessions live: a repeat answers the first. */
  results: Map<string, Promise<McpCallResult>>;
}

/** The digest a session is known by: the whole parsed spec (url or command, limits, trust). */
export function serverSpecDigest(spec: ParsedMcpServerSpec): string {
  return sha256Hex(Buffer.from(canonicalJson(spec as unknown as JsonValue), 'utf8'));
}

/**
 * The MCP client of this replica: one session per (workspace, run, server spec), opened on the
 * run's first call to that server and kept until the run's sessions are closed, have been idle
 * for `idleMs`, or the service stops; a short-lived one per list. A stdio server works in its run's workspace; a listed one
 * in a scratch workspace removed after the list.
 */
export class McpSessions {
  private readonly runs = new Map<string, RunSessions>();
  private readonly sweeper: NodeJS.Timeout;

  /**
   * `idleMs`: a run's sessions with no call for this long are closed, for a run whose close went
   * to another replica or never came (its supervisor died); `idleClosed` hears of each.
   */
  constructor(
    private readonly context: SessionContext,
    private readonly options: Pick<ResolvedSandboxOptions, 'runsDir' | 'operatorDir'>,
    private readonly idleMs = 10 * 60_000,
    private readonly idleClosed: (run: RunKey) => Promise<void> = async () => undefined,
  ) {
    this.sweeper = setInterval(() => void this.closeIdle(), Math.min(60_000, idleMs)).unref();
  }

  call(request: McpCallRequest): Promise<McpCallResult> {
    const run = this.runOf(request.workspaceId, request.runId);
    const earlier = run.results.get(request.callKey);
    if (earlier) return earlier;
    const session = this.sessionOf(run, request);
    if (request.bearer) session.bearer = request.bearer;
    if (request.computerGrant) session.computerKey = { grant: request.computerGrant };
    run.running++;
    const answer = session.call(request.tool, request.arguments).finally(() => {
      run.running--;
      run.lastUsed = performance.now();
    });
    run.results.set(request.callKey, answer);
    return answer;
  }

  /** Whether the run has sessions open on this replica. */
  has(run: RunKey): boolean {
    return this.runs.has(`${run.workspaceId}\u0000${run.runId}`);
  }

  /** How many runs have sessions open on this replica. */
  get openRuns(): number {
    return this.runs.size;
  }

  async list(request: { workspaceId: string; server: ParsedMcpServerSpec; bearer?: string }): Promise<McpListResult> {
    const id = `mcp-list:${request.workspaceId}:${randomUUID()}`;
    const workspaceDir = join(this.options.operatorDir, request.workspaceId, execKey(id));
    const session = new McpSession(request.server, { workspaceId: request.workspaceId, execId: id, workspaceDir }, this.context);
    session.bearer = request.bearer;
    session.computerKey = 'listing';
    try {
      const listed = await session.list();
      return { server: listed.server, protocolVersion: listed.protocolVersion, tools: listed.tools, ...(listed.skipped.length ? { skipped: listed.skipped } : {}) };
    } finally {
      await session.close();
      if (request.server.transport === 'stdio') await rm(workspaceDir, { recursive: true, force: true });
    }
  }

  /** Ends the run's sessions (a stdio server's process with them) and forgets its answers. */
  async close(workspaceId: string, runId: string): Promise<number> {
    const key = `${workspaceId}\u0000${runId}`;
    const run = this.runs.get(key);
    if (!run) return 0;
    this.runs.delete(key);
    const sessions = [...run.sessions.values()];
    await Promise.all(sessions.map((session) => session.close()));
    return sessions.length;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const runs = [...this.runs.values()];
    this.runs.clear();
    await Promise.all(runs.flatMap((run) => [...run.sessions.values()].map((session) => session.close())));
  }

  private runOf(workspaceId: string, runId: string): RunSessions {
    const key = `${workspaceId}\u0000${runId}`;
    let run = this.runs.get(key);
    if (!run) {
      run = { key: { workspaceId, runId }, sessions: new Map(), results: new Map(), running: 0, lastUsed: performance.now() };
      this.runs.set(key, run);
    }
    return run;
  }

  private async closeIdle(): Promise<void> {
    const cutoff = performance.now() - this.idleMs;
    const idle = [...this.runs.entries()].filter(([, run]) => run.running === 0 && run.lastUsed < cutoff);
    for (const [key] of idle) this.runs.delete(key);
    await Promise.all(idle.flatMap(([, run]) => [...run.sessions.values()].map((session) => session.close())));
    // Not hearing of it is harmless: calls still go to this replica, which opens fresh sessions.
    await Promise.all(idle.map(([, run]) => this.idleClosed(run.key).catch(() => undefined)));
  }

  private sessionOf(run: RunSessions, request: McpCallRequest): McpSession {
    const digest = serverSpecDigest(request.server);
    const known = run.sessions.get(digest);
    if (known && !known.broken) return known;
    void known?.close();
    const session = new McpSession(
      request.server,
      { workspaceId: request.workspaceId, execId: `mcp:${request.workspaceId}:${request.runId}:${digest}:${randomUUID()}`, workspaceDir: join(this.options.runsDir, request.runId, 'workspace') },
      this.context,
    );
    run.sessions.set(digest, session);
    return session;
  }
}
