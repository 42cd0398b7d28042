import { Inject, Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import {
  attentionStream,
  canonicalJson,
  PolicyCommands,
  redactJson,
  redactResource,
  sha256Hex,
  type AttentionView,
  type PolicyEventData,
} from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import type { z } from 'zod';
import { Authorize } from '../../authorize/authorize';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../../policy.options';
import { UnknownRunError } from '../../shared/errors';
import { attentionView, readAttention, type AttentionRow } from '../attention.rows';

export type RaiseAttentionRequest = z.output<(typeof PolicyCommands)['raiseAttention']['request']>;

/**
 * Records something a run could not settle itself for a person to look at, with the evidence
 * (redacted). It shows in the attention inbox like an approval; answering it acknowledges it.
 */
@Injectable()
export class RaiseAttention {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly authorize: Authorize,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  async execute(request: RaiseAttentionRequest): Promise<AttentionView> {
    const args = redactJson(request.arguments);
    const resource = request.resource === null ? null : redactResource(request.resource);
    const callDigest = sha256Hex(canonicalJson({ kind: request.kind, tool: request.tool, verb: request.verb, resource, arguments: args }));
    const row = await this.store.transaction(async (client) => {
      const run = await client.query<{ deployment_id: string; version_digest: string }>(
        'SELECT deployment_id, version_digest FROM policy.runs WHERE run_id = $1 AND workspace_id = $2',
        [request.runId, request.workspaceId],
      );
      if (!run.rows[0]) throw new UnknownRunError(request.runId);
      const attentionId = uuidv7();
      const deadline = new Date(this.options.clock().getTime() + 1_000 * this.options.defaultApprovalTimeoutSeconds);
      const inserted = await client.query<AttentionRow>(
        `INSERT INTO policy.attention (attention_id, workspace_id, run_id, deployment_id, version_digest, call_digest, tool, verb,
                                       resource, resource_key, approval_mode, arguments, requester, state, deadline, stream_version)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '', 'always', $10::jsonb, $11::jsonb, 'open', $12, 1)
         ON CONFLICT (run_id, call_digest) WHERE consumed_at IS NULL DO NOTHING
         RETURNING *`,
        [
          attentionId, request.workspaceId, request.runId, run.rows[0].deployment_id, run.rows[0].version_digest, callDigest, request.tool,
          request.verb, resource, JSON.stringify({ kind: request.kind, evidence: args }), JSON.stringify(request.requester), deadline,
        ],
      );
      if (!inserted.rows[0]) {
        const existing = await client.query<AttentionRow>('SELECT * FROM policy.attention WHERE run_id = $1 AND call_digest = $2 AND consumed_at IS NULL', [
          request.runId,
          callDigest,
        ]);
        return { row: existing.rows[0]!, created: false };
      }
      const data: PolicyEventData<'attention.requested'> = {
        attentionId,
        runId: request.runId,
        deploymentId: run.rows[0].deployment_id,
        versionDigest: run.rows[0].version_digest,
        tool: request.tool,
        verb: request.verb,
        resource,
        arguments: { kind: request.kind, evidence: args },
        requester: request.requester,
        deadline: deadline.toISOString(),
      };
      await this.store.append(attentionStream(attentionId), 'no_stream', [{ type: 'attention.requested', data, actor: request.requester }], {
        workspaceId: request.workspaceId,
        client,
      });
      return { row: inserted.rows[0], created: true };
    });
    if (row.created) await this.authorize.setDeadlineTimer(row.row);
    return attentionView((await readAttention(this.pool, row.row.attention_id)) ?? row.row);
  }
}
