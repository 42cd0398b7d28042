import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { jsonIssues, ValidationError, type ActivationResult, type JsonValue } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { NotFoundError, WebhookRejectedError } from '../shared/errors';
import { RunAdmission } from '../runs/run-admission';
import { deliveryKey, signatureMatches } from './webhook-signature';

export interface DeliverWebhook {
  triggerId: string;
  timestamp: string;
  signature: string;
  bodyBase64: string;
  contentType: string | null;
  receivedAt: string;
}

export const WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000;

/**
 * Webhook ingress. The signature is checked before anything is read from the body; a stale
 * timestamp is refused; a request seen before is refused as a replay (the delivery key is the
 * activation's dedupe key, so the unique index is the replay cache and it never expires).
 */
@Injectable()
export class DeliverWebhookUseCase {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
  ) {}

  async execute(command: DeliverWebhook): Promise<ActivationResult> {
    const { rows } = await this.pool.query<{ workspace_id: string; webhook_secret: string | null }>(
      `SELECT workspace_id, webhook_secret FROM intake.triggers WHERE trigger_id = $1 AND kind = 'webhook' AND active`,
      [command.triggerId],
    );
    const trigger = rows[0];
    if (!trigger?.webhook_secret) throw new NotFoundError('webhook', command.triggerId);
    const body = Buffer.from(command.bodyBase64, 'base64');
    if (!/^\d{1,12}$/.test(command.timestamp) || !signatureMatches(trigger.webhook_secret, command.timestamp, body, command.signature)) {
      throw new WebhookRejectedError('webhook_signature_invalid', 'the signature does not match the body and timestamp');
    }
    const skewMs = Math.abs(Date.parse(command.receivedAt) - Number(command.timestamp) * 1000);
    if (skewMs > WEBHOOK_TOLERANCE_MS) {
      throw new WebhookRejectedError('webhook_timestamp_stale', `the timestamp is ${Math.round(skewMs / 1000)} s from now; the tolerance is 300 s`);
    }
    const input = parseBody(body, command.contentType);
    const result = await this.store.transaction((client) =>
      this.admission.admit(client, { workspaceId: trigger.workspace_id, deploymentId: null, triggerId: command.triggerId }, {
        source: 'webhook',
        dedupeKey: deliveryKey(command.timestamp, command.signature),
        triggerId: command.triggerId,
        input,
        details: { contentType: command.contentType, bytes: body.length },
        actor: { kind: 'system', id: `webhook:${command.triggerId}` },
        receivedAt: new Date(command.receivedAt),
      }),
    );
    if (result.duplicate) throw new WebhookRejectedError('webhook_replayed', 'this signed request was already delivered');
    return result;
  }
}

function parseBody(body: Buffer, contentType: string | null): JsonValue | null {
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  if (contentType && /^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ValidationError('invalid webhook body', [{ path: '(body)', message: `not JSON: ${(error as Error).message}` }]);
    }
    const issues = jsonIssues(value);
    if (issues.length) throw new ValidationError('invalid webhook body', issues);
    return value as JsonValue;
  }
  if (!Buffer.from(text, 'utf8').equals(body)) {
    throw new ValidationError('invalid webhook body', [{ path: '(body)', message: 'only JSON or UTF-8 text bodies are accepted' }]);
  }
  return { contentType: contentType ?? 'text/plain', text };
}
