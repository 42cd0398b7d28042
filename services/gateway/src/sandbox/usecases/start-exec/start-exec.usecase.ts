import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { SandboxCommands, type ExecResult } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { PG_POOL } from '@packetagent/eventstore';
import { assertRunInWorkspace } from '../../../audit/run-streams';
import { ExecLiveFeed } from '../../exec-live-feed';
import { SANDBOX_ROUTES_OPTIONS, type SandboxRoutesOptions } from '../../sandbox-routes.options';
import type { StartExecCommand } from './start-exec.command';

export type StartedExec = { kind: 'running'; execId: string } | { kind: 'ended'; result: ExecResult };

/**
 * Sends an operator's command to the sandbox and answers as soon as it has started (or, when
 * asked to wait, once it has ended). The request to the sandbox is what runs the exec, so it
 * stays open after the answer, with a timeout covering the command's wall time: the exec runs to
 * its end whatever the client does.
 */
@Injectable()
export class StartExec {
  private readonly logger = new Logger('sandbox');

  constructor(
    private readonly bus: CommandBus,
    private readonly live: ExecLiveFeed,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(SANDBOX_ROUTES_OPTIONS) private readonly options: SandboxRoutesOptions,
  ) {}

  async execute(command: StartExecCommand): Promise<StartedExec> {
    // Run workspaces are not kept per workspace on disk: only a run of the caller's workspace may be named.
    if (command.runId !== null) await assertRunInWorkspace(this.pool, command.workspaceId, command.runId);
    const wallTimeMs = command.limits.wallTimeMs ?? (await this.bus.request(SandboxCommands.status, {})).defaults.wallTimeMs;
    const execId = `op-${randomUUID()}`;

    const request = { execId, workspaceId: command.workspaceId, runId: command.runId ?? undefined, argv: command.argv, cwd: command.cwd, env: command.env, limits: command.limits, requestedBy: command.requestedBy };
    const timeout = { timeoutMs: wallTimeMs + this.options.replyMarginMs };
    if (command.wait) return { kind: 'ended', result: await this.bus.request(SandboxCommands.exec, request, timeout) };

    let started: () => void = () => undefined;
    const startedMessage = new Promise<StartedExec>((resolve) => (started = () => resolve({ kind: 'running', execId })));
    // Subscribed before the request leaves, so the `started` message cannot be missed.
    const subscription = await this.live.subscribe(command.workspaceId, execId, (message) => {
      if (message.kind !== 'output') started();
    });
    const reply = this.bus.request(SandboxCommands.exec, request, timeout);
    let answered = false;
    reply.catch((error: unknown) => {
      // Before the answer the caller is told; after it, the record says how the exec ended.
      if (answered) this.logger.warn(`exec ${execId} of workspace ${command.workspaceId}: the sandbox's answer was lost (${error instanceof Error ? error.message : String(error)}); its record keeps how it ended`);
    });

    const stopChecking = new AbortController();
    try {
      return await Promise.race([reply.then((result): StartedExec => ({ kind: 'ended', result })), startedMessage, this.recorded(command.workspaceId, execId, stopChecking.signal)]);
    } finally {
      answered = true;
      stopChecking.abort();
      subscription.close();
    }
  }

  /**
   * Live messages are lossy and a driver may be slow to start: the exec's record (written just
   * before the driver starts it) also says it is under way.
   */
  private async recorded(workspaceId: string, execId: string, stop: AbortSignal): Promise<StartedExec> {
    for (;;) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.startCheckMs);
        stop.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
      // The answer has been given; what this returns is not read.
      if (stop.aborted) return { kind: 'running', execId };
      const record = await this.bus.request(SandboxCommands.get, { workspaceId, execId }).catch(() => null);
      if (record?.result) return { kind: 'ended', result: record.result };
      if (record) return { kind: 'running', execId };
    }
  }
}
