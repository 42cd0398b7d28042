import { Inject, Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { streamCategory, type DecodedEvent, type IntakeEventData, type JsonValue } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { withdrawOpenAttention } from '../attention/attention.rows';
import { SYSTEM_ACTOR } from '../attention/usecases/answer-attention';
import { compileGrants, type GrantSet } from '../grants/compile-grants';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../policy.options';
import { EffectiveMcpServers } from './effective-mcp-servers';

export type ApplyOutcome = 'applied' | 'ignored' | 'not_relevant';

const RELEVANT = new Set(['deployment.created', 'deployment.rolled_back', 'deployment.updated', 'deployment.paused', 'deployment.resumed', 'deployment.revoked']);

/**
 * Projects a deployment's status, pin and compiled grants into policy.deployments. Idempotent:
 * the last applied global position is stored with the change, and an event at or below it
 * changes nothing. A revocation also withdraws the deployment's open attention records in the
 * same transaction. Revoked is final: no later event makes the deployment usable again.
 */
@Injectable()
export class ApplyDeploymentEvent {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
    private readonly mcpServers: EffectiveMcpServers,
  ) {}

  async execute(event: DecodedEvent): Promise<ApplyOutcome> {
    if (!RELEVANT.has(event.type)) return 'not_relevant';
    const deploymentId = event.stream.slice(streamCategory(event.stream).length + 1);
    return this.store.transaction(async (client) => {
      await client.query(
        `INSERT INTO policy.deployments (deployment_id, workspace_id) VALUES ($1, $2) ON CONFLICT (deployment_id) DO NOTHING`,
        [deploymentId, event.workspaceId],
      );
      const { rows } = await client.query<{ status: string; last_position: string }>(
        `SELECT status, last_position FROM policy.deployments WHERE deployment_id = $1 FOR UPDATE`,
        [deploymentId],
      );
      const current = rows[0]!;
      if (Number(current.last_position) >= event.globalPosition) return 'ignored';
      const revoked = current.status === 'revoked';
      switch (event.type) {
        case 'deployment.created': {
          const data = event.data as IntakeEventData<'deployment.created'>;
          await this.pin(client, event.workspaceId, deploymentId, data.version, data.digest, data.effectiveDigest, data.limits?.tools);
          break;
        }
        case 'deployment.rolled_back':
        case 'deployment.updated': {
          const data = event.data as IntakeEventData<'deployment.rolled_back'>;
          await this.pin(client, event.workspaceId, deploymentId, data.version, data.digest, data.effectiveDigest, data.limits?.tools);
          break;
        }
        case 'deployment.paused':
          if (!revoked) await client.query(`UPDATE policy.deployments SET status = 'paused' WHERE deployment_id = $1`, [deploymentId]);
          break;
        case 'deployment.resumed':
          if (!revoked) await client.query(`UPDATE policy.deployments SET status = 'active' WHERE deployment_id = $1`, [deploymentId]);
          break;
        case 'deployment.revoked': {
          await client.query(`UPDATE policy.deployments SET status = 'revoked' WHERE deployment_id = $1`, [deploymentId]);
          const reason = (event.data as IntakeEventData<'deployment.revoked'>).reason;
          await withdrawOpenAttention(this.store, client, deploymentId, `deployment revoked: ${reason}`, SYSTEM_ACTOR);
          break;
        }
      }
      await client.query(`UPDATE policy.deployments SET last_position = $2, updated_at = now() WHERE deployment_id = $1`, [deploymentId, event.globalPosition]);
      return 'applied';
    });
  }

  private async pin(
    client: PoolClient,
    workspaceId: string,
    deploymentId: string,
    version: number,
    digest: string,
    effectiveDigest: string,
    tools: readonly JsonValue[] | undefined,
  ): Promise<void> {
    let set: GrantSet | null = null;
    if (tools) {
      const compiled = compileGrants(effectiveDigest, tools, await this.mcpServers.of(workspaceId, effectiveDigest, tools));
      for (const issue of compiled.issues) this.options.log('warn', 'tool grant left out of the compiled grants', { deploymentId, ...issue });
      set = compiled.set;
      await client.query(
        `INSERT INTO policy.grant_sets (effective_digest, grants, grants_digest) VALUES ($1, $2::jsonb, $3) ON CONFLICT (effective_digest) DO NOTHING`,
        [effectiveDigest, JSON.stringify(set.grants), set.grantsDigest],
      );
    } else {
      // Events written before limits existed carry no grants: calls under them are denied.
      this.options.log('warn', 'deployment event carries no tool grants', { deploymentId });
    }
    await client.query(
      `UPDATE policy.deployments
          SET version = $2, version_digest = $3, effective_digest = $4, grants = $5::jsonb, grants_digest = $6
        WHERE deployment_id = $1`,
      [deploymentId, version, digest, effectiveDigest, set ? JSON.stringify(set.grants) : null, set?.grantsDigest ?? null],
    );
  }
}
