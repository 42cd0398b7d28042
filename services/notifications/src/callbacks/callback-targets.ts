import { Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { DomainError, IntakeCommands, PolicyCommands, type CallbackView } from '@packetagent/contracts';
import type { CallbackRow } from './callback.rows';

const TIMEOUT_MS = 5_000;

export class CallbackStaleError extends DomainError {
  readonly code = 'callback_stale';
}

/**
 * What a link is about, read from its owners: the attention from policy, the run from intake.
 * A link is bound to the worker version it was sent for: once the run moved to another, its
 * controls are refused (the message no longer describes what they would act on).
 */
@Injectable()
export class CallbackTargets {
  constructor(private readonly commands: CommandBus) {}

  async detail(row: CallbackRow): Promise<CallbackView['detail']> {
    if (row.target_kind === 'attention') {
      const attention = await this.commands.request(PolicyCommands.getAttention, { workspaceId: row.workspace_id, attentionId: row.target_id }, { timeoutMs: TIMEOUT_MS });
      this.checkDigest(row, attention.versionDigest);
      return { kind: 'attention', state: attention.state, tool: attention.tool, verb: attention.verb, resource: attention.resource, deadline: attention.deadline, runId: attention.runId };
    }
    const run = await this.commands.request(IntakeCommands.getRun, { workspaceId: row.workspace_id, runId: row.target_id }, { timeoutMs: TIMEOUT_MS });
    this.checkDigest(row, run.digest);
    return { kind: 'run', state: run.state, version: run.version, pauseRequested: run.pauseRequested, stopRequested: run.stopRequested, updatedAt: run.updatedAt };
  }

  /** Why the link may no longer act (null: it may). */
  async staleness(row: CallbackRow): Promise<DomainError | null> {
    try {
      await this.detail(row);
      return null;
    } catch (error) {
      if (error instanceof CallbackStaleError) return error;
      throw error;
    }
  }

  private checkDigest(row: CallbackRow, digest: string): void {
    if (row.version_digest !== null && row.version_digest !== digest) {
      throw new CallbackStaleError(`this link was sent for version ${row.version_digest.slice(0, 12)} of ${row.worker_name}; the run now runs ${digest.slice(0, 12)}`);
    }
  }
}
