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
import { NotFoundError, PayloadTooLargeError } from '../shared/errors';
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

/** The deployment an activation addresses: directly, or through one of its triggers (which must still be bound). */
export interface ActivationTarget {
  workspaceId: string;
  deploymentId: string | null;
  triggerId: string | null;
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

  /** Admits inside `client`'s transaction: locks the target deployment and looks up the dedupe key in one statement. */
  async admit(client: PoolClient, target: ActivationTarget, request: ActivationRequest): Promise<ActivationResult> {
    const { deployment, existing } = await lockForActivation(client, target, request.dedupeKey);
    if (existing) return activationResult(existing, true);

    const decision = decideAdmission({
      deploymentId: deployment.id,
      status: deployment.status,
      statusReason: deployment.status_reason,
      activeRuns: deployment.active_runs,
      heldRuns: deployment.held_runs,
      maxConcurrentRuns: deployment.max_concurrent_runs,
    });
    const runId = newId();
    const { activation, payload } = this.activation(request);
    const hold = decision.outcome === 'hold' ? decision.reason : null;
    // The run row (the dedupe guarantee) and the deployment's counters in one statement. A
    // concurrent activation with the same key that committed while this one waited for the
    // deployment lock is invisible to the lock statement's snapshot, but not to ON CONFLICT:
    // nothing is inserted, the counters do not move, and the committed run is returned.
    const { rows } = await client.query<RunRow>({
      name: 'intake_insert_run',
      text: `WITH inserted AS (
               INSERT INTO intake.runs (id, workspace_id, deployment_id, worker_id, version, digest, state, hold, source, trigger_id,
                                        activation_id, dedupe_key, stream_version)
               VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, 1)
               ON CONFLICT (deployment_id, dedupe_key) DO NOTHING
               RETURNING *),
             counted AS (
               UPDATE intake.deployments SET active_runs = active_runs + $12, held_runs = held_runs + $13, updated_at = now()
                WHERE id = $3 AND EXISTS (SELECT 1 FROM inserted))
             SELECT * FROM inserted`,
      values: [
        runId, deployment.workspace_id, deployment.id, deployment.worker_id, deployment.version, deployment.digest, hold,
        request.source, request.triggerId, activation.activationId, request.dedupeKey, hold ? 0 : 1, hold ? 1 : 0,
      ],
    });
    if (!rows[0]) {
      const committed = await client.query<RunRow>('SELECT * FROM intake.runs WHERE deployment_id = $1 AND dedupe_key = $2', [deployment.id, request.dedupeKey]);
      return activationResult(committed.rows[0]!, true);
    }
    if (payload) {
      await client.query('INSERT INTO intake.payloads (id, workspace_id, digest, bytes, content) VALUES ($1, $2, $3, $4, $5::jsonb)', [
        payload.id,
        deployment.workspace_id,
        payload.digest,
        payload.bytes,
        payload.canonical,
      ]);
    }
    const pin = pinOf(deployment);
    await this.store.append(
      Streams.run(runId),
      'no_stream',
      [
        hold
          ? { type: 'run.deferred', data: { ...pin, runId, activation, reason: hold }, actor: request.actor }
          : { type: 'run.admitted', data: { ...pin, runId, activation }, actor: request.actor },
      ],
      { workspaceId: deployment.workspace_id, client },
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

  /** The activation as recorded in the run's first event; an input too large to travel inline becomes a payload row. */
  private activation(request: ActivationRequest): {
    activation: Activation;
    payload: { id: string; digest: string; bytes: number; canonical: string } | null;
  } {
    const base = {
      activationId: newId(),
      source: request.source,
      dedupeKey: request.dedupeKey,
      triggerId: request.triggerId,
      receivedAt: (request.receivedAt ?? new Date()).toISOString(),
      details: request.details,
    };
    if (request.input === null) return { activation: { ...base, input: null, inputRef: null }, payload: null };
    const canonical = canonicalJson(request.input);
    const bytes = Buffer.byteLength(canonical);
    if (bytes > this.limits.maxInputBytes) throw new PayloadTooLargeError(bytes, this.limits.maxInputBytes);
    if (bytes <= this.limits.inlineInputBytes) return { activation: { ...base, input: request.input, inputRef: null }, payload: null };
    const payload = { id: newId(), digest: sha256Hex(canonical), bytes, canonical };
    return { activation: { ...base, input: null, inputRef: { payloadId: payload.id, digest: payload.digest, bytes } }, payload };
  }
}

/**
 * Locks the deployment an activation addresses and finds the run its dedupe key already made,
 * in one statement. Every path that changes a deployment's counters takes this row lock first.
 */
async function lockForActivation(
  client: PoolClient,
  target: ActivationTarget,
  dedupeKey: string,
): Promise<{ deployment: DeploymentRow; existing: RunRow | null }> {
  // Two statements, not one with optional filters, so each keeps a plan on its primary key.
  const existingRun = `CASE WHEN r.id IS NULL THEN NULL ELSE to_jsonb(r) END AS existing`;
  const { rows } = target.triggerId
    ? await client.query<DeploymentRow & { existing: RunRow | null }>({
        name: 'intake_lock_by_trigger',
        text: `SELECT d.*, ${existingRun}
                 FROM intake.triggers t
                 JOIN intake.deployments d ON d.id = t.deployment_id
                 LEFT JOIN intake.runs r ON r.deployment_id = d.id AND r.dedupe_key = $3
                WHERE t.trigger_id = $1 AND t.active AND d.workspace_id = $2 AND ($4::text IS NULL OR d.id = $4)
                FOR UPDATE OF d`,
        values: [target.triggerId, target.workspaceId, dedupeKey, target.deploymentId],
      })
    : await client.query<DeploymentRow & { existing: RunRow | null }>({
        name: 'intake_lock_by_deployment',
        text: `SELECT d.*, ${existingRun}
                 FROM intake.deployments d
                 LEFT JOIN intake.runs r ON r.deployment_id = d.id AND r.dedupe_key = $3
                WHERE d.id = $1 AND d.workspace_id = $2
                FOR UPDATE OF d`,
        values: [target.deploymentId, target.workspaceId, dedupeKey],
      });
  const row = rows[0];
  if (!row) throw new NotFoundError(target.triggerId ? 'trigger' : 'deployment', (target.triggerId ?? target.deploymentId)!);
  const { existing, ...deployment } = row;
  return { deployment: deployment as DeploymentRow, existing };
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
