import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { ValidationError, type ActivationResult, type ActorRef, type JsonValue, type TriggerBinding } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { RunAdmission } from '../runs/run-admission';
import { alertDedupeKey, alertMatches, AlertmanagerPayloadSchema, type Alert } from './alertmanager';

export interface IngestAlerts {
  workspaceId: string;
  actor: ActorRef;
  payload: unknown;
}

type AlertActivation = ActivationResult & { fingerprint: string; status: 'firing' | 'resolved' };

/** Alertmanager's webhook: each alert wakes every deployment of the workspace subscribed to it, once per occurrence. */
@Injectable()
export class IngestAlertsUseCase {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
  ) {}

  async execute(command: IngestAlerts): Promise<{ received: number; activations: AlertActivation[] }> {
    const parsed = AlertmanagerPayloadSchema.safeParse(command.payload);
    if (!parsed.success) {
      throw new ValidationError(
        'invalid Alertmanager payload',
        parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
      );
    }
    const { rows: triggers } = await this.pool.query<{ deployment_id: string; spec: TriggerBinding }>(
      `SELECT t.deployment_id, t.spec FROM intake.triggers t JOIN intake.deployments d ON d.id = t.deployment_id
        WHERE t.workspace_id = $1 AND t.kind = 'alert' AND t.active AND d.status <> 'revoked'
        ORDER BY t.deployment_id, t.trigger_id`,
      [command.workspaceId],
    );
    const activations: AlertActivation[] = [];
    for (const alert of parsed.data.alerts) {
      const woken = new Set<string>();
      for (const { deployment_id: deploymentId, spec } of triggers) {
        if (woken.has(deploymentId) || !alertMatches(spec, alert)) continue;
        woken.add(deploymentId);
        const result = await this.store.transaction(async (client) => {
          return this.admission.admit(client, { workspaceId: command.workspaceId, deploymentId, triggerId: spec.triggerId }, {
            source: 'alert',
            dedupeKey: alertDedupeKey(alert),
            triggerId: spec.triggerId,
            input: alertInput(alert, parsed.data.receiver, parsed.data.groupKey),
            details: { fingerprint: alert.fingerprint, status: alert.status, alertname: alert.labels['alertname'] ?? null },
            actor: command.actor,
          });
        });
        activations.push({ ...result, fingerprint: alert.fingerprint, status: alert.status });
      }
    }
    return { received: parsed.data.alerts.length, activations };
  }
}

function alertInput(alert: Alert, receiver: string, groupKey: string): JsonValue {
  return {
    status: alert.status,
    labels: alert.labels,
    annotations: alert.annotations,
    startsAt: alert.startsAt,
    endsAt: alert.endsAt,
    generatorURL: alert.generatorURL,
    fingerprint: alert.fingerprint,
    receiver,
    groupKey,
  };
}
