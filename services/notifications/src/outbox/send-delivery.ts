import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '@packetagent/eventstore';
import { DomainError, type RemoteAction } from '@packetagent/contracts';
import type { Pool } from 'pg';
import { CallbackTokens } from '../callbacks/callback-tokens';
import { actionLabel } from '../callbacks/remote-actions';
import { CHANNELS, type Channel, type ChannelOutcome, type MessageAction } from '../channels/channel';
import { NOTIFICATIONS_OPTIONS, type ResolvedNotificationsOptions } from '../notifications.options';
import type { DeliveryRow } from './delivery.rows';
import { RouteCredentials } from './route-credentials';
import { RunContextUnavailableError, RunContexts } from '../sources/run-context';
import { THREADED_TRIGGERS } from '../channels/threaded-triggers';


/** Vault and policy answers that another attempt cannot change (the operator must fix the route, then redrive). */
const PERMANENT_CREDENTIAL_CODES: ReadonlySet<string> = new Set(['credential_not_found', 'route_credential_unavailable', 'unknown_run', 'credential_grant_invalid']);

/**
 * One attempt of one delivery: the route's credential from the vault, the message's controls as
 * signed links, the run's earlier progress message, then the channel. Whatever fails is an
 * outcome (retryable or not), never an exception out of here, and never quotes a secret.
 */
@Injectable()
export class SendDelivery {
  private readonly channels: ReadonlyMap<string, Channel>;

  constructor(
    @Inject(CHANNELS) channels: Channel[],
    private readonly credentials: RouteCredentials,
    private readonly contexts: RunContexts,
    private readonly tokens: CallbackTokens,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: ResolvedNotificationsOptions,
  ) {
    this.channels = new Map(channels.map((channel) => [channel.channel, channel]));
  }

  async send(row: DeliveryRow, signal: AbortSignal): Promise<ChannelOutcome> {
    const channel = this.channels.get(row.route.channel);
    if (!channel) return { ok: false, retryable: false, status: null, code: 'channel_unavailable', message: `this build cannot send through ${row.route.channel}` };
    let credential: string | null = null;
    if (row.route.credential !== null) {
      try {
        const context = await this.contexts.load(row.workspace_id, row.run_id!);
        if (!context) throw new RunContextUnavailableError(`run ${row.run_id} has no pin`);
        credential = await this.credentials.resolve(
          { workspaceId: row.workspace_id, runId: row.run_id!, routeIndex: row.route.index, deliveryId: row.delivery_id, effectiveDigest: context.pin.effectiveDigest },
          this.options.attemptTimeoutMs,
        );
      } catch (error) {
        const code = error instanceof DomainError ? error.code : 'credential_unavailable';
        const message = error instanceof DomainError ? error.message : 'the route credential could not be read';
        return { ok: false, retryable: !PERMANENT_CREDENTIAL_CODES.has(code), status: null, code, message: `credential "${row.route.credential}": ${message}` };
      }
    }
    const [actions, thread] = await Promise.all([this.actions(row), this.thread(row)]);
    try {
      return await channel.send({
        message: row.message,
        actions,
        consoleUrl: row.run_id ? `${this.options.publicUrl}/w/${encodeURIComponent(row.workspace_id)}/runs/${encodeURIComponent(row.run_id)}` : null,
        route: row.route,
        credential,
        thread,
        allowPrivate: this.options.allowPrivate,
        timeoutMs: this.options.attemptTimeoutMs,
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      // A channel that throws has a bug or met something unforeseen: retry, and say what without quoting it.
      this.options.log('warn', 'notification channel failed', { channel: row.route.channel, deliveryId: row.delivery_id, error: error instanceof Error ? error.name : 'unknown' });
      return { ok: false, retryable: true, status: null, code: 'channel_failed', message: `the ${row.route.channel} channel failed (${error instanceof Error ? error.name : 'unknown error'})` };
    }
  }

  private async actions(row: DeliveryRow): Promise<MessageAction[]> {
    const { rows } = await this.pool.query<{ callback_id: string; action: RemoteAction; expires_at: Date }>(
      'SELECT callback_id, action, expires_at FROM notifications.callbacks WHERE delivery_id = $1 ORDER BY callback_id',
      [row.delivery_id],
    );
    return rows.map((callback) => ({
      action: callback.action,
      label: actionLabel(callback.action),
      url: `${this.options.publicUrl}/api/v1/callbacks/${this.tokens.sign(callback.callback_id)}`,
      expiresAt: callback.expires_at.toISOString(),
    }));
  }

  private async thread(row: DeliveryRow): Promise<{ ref: string } | null> {
    if (!row.thread_key || !THREADED_TRIGGERS.has(row.trigger)) return null;
    const { rows } = await this.pool.query<{ ref: string }>('SELECT ref FROM notifications.threads WHERE thread_key = $1', [row.thread_key]);
    return rows[0] ? { ref: rows[0].ref } : null;
  }
}
