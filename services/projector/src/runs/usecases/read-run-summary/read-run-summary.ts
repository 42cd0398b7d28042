import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import type { ProjectorCommands } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { fromDatabase, PROJECTOR_SCHEMA, RUNS_TABLE } from '@packetagent/projections';
import { RunNotFoundError } from '../../../shared/errors';

export type ReadRunSummaryRequest = z.output<typeof ProjectorCommands.runSummary.request>;
export type ReadRunSummaryResult = z.input<typeof ProjectorCommands.runSummary.response>;

type Nullable<T> = T | null;

/** One run from the runs projection; another workspace's run is not found, like a missing one. */
@Injectable()
export class ReadRunSummary {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(request: ReadRunSummaryRequest): Promise<ReadRunSummaryResult> {
    const { rows } = await this.pool.query<Record<string, unknown>>(`SELECT * FROM ${PROJECTOR_SCHEMA}.runs WHERE run_id = $1 AND workspace_id = $2`, [
      request.runId,
      request.workspaceId,
    ]);
    if (!rows[0]) throw new RunNotFoundError(request.runId);
    const row = fromDatabase(RUNS_TABLE, rows[0]);
    const text = (name: string) => row[name] as Nullable<string>;
    const checkpointSeq = row['last_checkpoint_seq'] as Nullable<number>;
    return {
      runId: row['run_id'] as string,
      deploymentId: row['deployment_id'] as string,
      workerName: row['worker_name'] as string,
      version: row['version'] as number,
      state: row['state'] as ReadRunSummaryResult['state'],
      phase: row['phase'] as ReadRunSummaryResult['phase'],
      iteration: row['iteration'] as number,
      toolCalls: row['tool_calls'] as number,
      costUsd: row['cost_usd'] as number,
      bounds: row['bounds'] as ReadRunSummaryResult['bounds'],
      remaining: row['remaining'] as ReadRunSummaryResult['remaining'],
      waitingOn: text('waiting_reason') ? { reason: text('waiting_reason') as 'approval', attentionId: text('waiting_attention_id') } : null,
      lastCheckpoint:
        checkpointSeq !== null ? { seq: checkpointSeq, digest: text('last_checkpoint_digest')!, at: text('last_checkpoint_at')! } : null,
      outcome: text('outcome_type') ? { type: text('outcome_type')!, reason: text('outcome_reason'), detail: text('outcome_detail') } : null,
      model: row['model'] as ReadRunSummaryResult['model'],
      createdAt: text('created_at')!,
      startedAt: text('started_at'),
      endedAt: text('ended_at'),
    };
  }
}
