import { Inject, Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import {
  canonicalJson,
  sha256Hex,
  type Activation,
  type ActivationResult,
  type ActivationSource,
  type ActorRef,
  type JsonValue,
  type RunPin,
} from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { PayloadTooLargeError } from '../shared/errors';
import { newId, Streams } from '../shared/ids';
import type { DeploymentRow } from '../deployments/deployment.rows';
import { decideAdmission } from './admission.decider';
import { activationResult, type RunRow } from './run.rows';

export const INTAKE_LIMITS = Symbol('INTAKE_LIMITS');

export interface IntakeLimits {
  /** Inputs up to this size travel inside the run's first event. */
  inlineInputBytes: number;
  /** Larger inputs are stored by reference up to this size; beyond it the activation is refused. */
  maxInputBytes: number;
}

export interface ActivationRequest {
  source: ActivationSource;
  dedupeKey: string;
  triggerId: string | null;
  input: JsonValue | null;
  details: Record<string, JsonValue>;
  actor: ActorRef;
  receivedAt?: Date;
}

/**
 * Turns an activation into a run, inside the caller's transaction and under the deployment's
 * row lock: the run's first event, its row and the deployment's counters commit together,
 * and the (deployment, dedupe key) unique index makes a repeated activation find its run.
 */
@Injectable()
export class RunAdmission {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(INTAKE_LIMITS) private readonly limits: IntakeLimits,
  ) {}

  /** `deployment` must have been read FOR UPDATE in `client`'s transaction. */
  async admit(client: PoolClient, deployment: DeploymentRow, request: ActivationRequest): Promise<ActivationResult> {
    const existing = await client.query<RunRow>('SELECT * FROM intake.runs WHERE deployment_id = $1 AND dedupe_key = $2', [
      deployment.id,
      request.dedupeKey,
    ]);
    if (existing.rows[0]) return activationResult(existing.rows[0], true);

    const decision = decideAdmission({
      deploymentId: deployment.id,
      status: deployment.status,
      statusReason: deployment.status_reason,
      activeRuns: deployment.active_runs,
      heldRuns: deployment.held_runs,
      maxConcurrentRuns: deployment.max_concurrent_runs,
    });
    const runId = newId();
    const activation = await this.activation(client, deployment.workspace_id, request);
    const pin = pinOf(deployment);
    const hold = decision.outcome === 'hold' ? decision.reason : null;
    const append = await this.store.append(
      Streams.run(runId),
      'no_stream',
      [
        hold
          ? { type: 'run.deferred', data: { ...pin, runId, activation, reason: hold }, actor: request.actor }
          : { type: 'run.admitted', data: { ...pin, runId, activation }, actor: request.actor },
      ],
      { workspaceId: deployment.workspace_id, client },
    );
    const { rows } = await client.query<RunRow>(
      `INSERT INTO intake.runs (id, workspace_id, deployment_id, worker_id, version, digest, state, hold, source, trigger_id,
                                activation_id, dedupe_key, stream_version)
       VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, $12) RETURNING *`,
      [
        runId, deployment.workspace_id, deployment.id, deployment.worker_id, deployment.version, deployment.digest, hold,
        request.source, request.triggerId, activation.activationId, request.dedupeKey, append.streamVersion,
      ],
    );
    await client.query(
      `UPDATE intake.deployments SET active_runs = active_runs + $2, held_runs = held_runs + $3, updated_at = now() WHERE id = $1`,
      [deployment.id, hold ? 0 : 1, hold ? 1 : 0],
    );
    return activationResult(rows[0]!, false);
  }

  /** Admits up to `count` held runs in arrival order; the rest now wait for a slot. */
  async releaseHeld(client: PoolClient, deployment: DeploymentRow, count: number, actor: ActorRef): Promise<number> {
    const { rows } = await client.query<RunRow>(
      `SELECT * FROM intake.runs WHERE deployment_id = $1 AND hold IS NOT NULL ORDER BY created_at, id LIMIT $2 FOR UPDATE`,
      [deployment.id, count],
    );
    for (const run of rows) {
      const [first] = await this.store.readStream(Streams.run(run.id), { limit: 1 });
      const deferred = first?.data as { activation: Activation } | undefined;
      if (!deferred?.activation) throw new Error(`run ${run.id} has no activation to admit`);
      // The pin stays the one recorded at activation: a rollback in between does not move a run.
      const recorded = first!.data as RunPin;
      const append = await this.store.append(
        Streams.run(run.id),
        Number(run.stream_version),
        [{ type: 'run.admitted', data: { ...pick(recorded), runId: run.id, activation: deferred.activation }, actor }],
        { workspaceId: deployment.workspace_id, client },
      );
      await client.query(`UPDATE intake.runs SET hold = NULL, stream_version = $2, updated_at = now() WHERE id = $1`, [
        run.id,
        append.streamVersion,
      ]);
    }
    await client.query(
      `UPDATE intake.runs SET hold = 'concurrency_limit', updated_at = now()
        WHERE deployment_id = $1 AND hold = 'deployment_paused'`,
      [deployment.id],
    );
    await client.query(
      `UPDATE intake.deployments SET active_runs = active_runs + $2, held_runs = held_runs - $2, updated_at = now() WHERE id = $1`,
      [deployment.id, rows.length],
    );
    return rows.length;
  }

  private async activation(client: PoolClient, workspaceId: string, request: ActivationRequest): Promise<Activation> {
    const base = {
      activationId: newId(),
      source: request.source,
      dedupeKey: request.dedupeKey,
      triggerId: request.triggerId,
      receivedAt: (request.receivedAt ?? new Date()).toISOString(),
      details: request.details,
    };
    if (request.input === null) return { ...base, input: null, inputRef: null };
    const canonical = canonicalJson(request.input);
    const bytes = Buffer.byteLength(canonical);
    if (bytes > this.limits.maxInputBytes) throw new PayloadTooLargeError(bytes, this.limits.maxInputBytes);
    if (bytes <= this.limits.inlineInputBytes) return { ...base, input: request.input, inputRef: null };
    const payloadId = newId();
    const digest = sha256Hex(canonical);
    await client.query('INSERT INTO intake.payloads (id, workspace_id, digest, bytes, content) VALUES ($1, $2, $3, $4, $5::jsonb)', [
      payloadId,
      workspaceId,
      digest,
      bytes,
      canonical,
    ]);
    return { ...base, input: null, inputRef: { payloadId, digest, bytes } };
  }
}

function pinOf(deployment: DeploymentRow): RunPin {
  return {
    deploymentId: deployment.id,
    workerId: deployment.worker_id,
    workerName: deployment.worker_name,
    version: deployment.version,
    digest: deployment.digest.trim(),
    effectiveDigest: deployment.effective_digest.trim(),
  };
}

function pick(pin: RunPin): RunPin {
  return {
    deploymentId: pin.deploymentId,
    workerId: pin.workerId,
    workerName: pin.workerName,
    version: pin.version,
    digest: pin.digest,
    effectiveDigest: pin.effectiveDigest,
  };
}
