import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { callbackStream, DomainError, type CallbackView, type JsonValue, type NotificationEventData, type NotificationsCommands } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import type { z } from 'zod';
import { NOTIFICATIONS_OPTIONS, type ResolvedNotificationsOptions } from '../notifications.options';
import { CallbackExpiredError, CallbackInvalidError, CallbackRefusedError, CallbackUsedError } from '../shared/errors';
import { CallbackTokens } from './callback-tokens';
import { callbackView, readCallback, type CallbackRow } from './callback.rows';
import { CallbackTargets } from './callback-targets';
import { runRemoteAction } from './run-remote-action';

type ExecuteRequest = z.output<(typeof NotificationsCommands)['executeCallback']['request']>;
type ExecuteResult = z.input<(typeof NotificationsCommands)['executeCallback']['response']>;

export const requestDigest = (parts: readonly string[]): string => createHash('sha256').update(parts.join('\n')).digest('hex');

/**
 * Remote-control links. Inspecting one changes nothing (mail scanners open links). Using one
 * takes its row lock, refuses a used link (409) and an expired one (410), checks that what it
 * is bound to still is what it was (the same version digest), runs the operator command and
 * records the use in one transaction: a replay, or a race of two uses, does it once.
 */
@Injectable()
export class UseCallback {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly commands: CommandBus,
    private readonly tokens: CallbackTokens,
    private readonly targets: CallbackTargets,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: ResolvedNotificationsOptions,
  ) {}

  async inspect(token: string): Promise<CallbackView> {
    const row = await this.row(token);
    const detail = row.action === 'open' ? await this.targets.detail(row) : null;
    return callbackView(row, this.options.clock(), detail);
  }

  async execute(request: ExecuteRequest): Promise<ExecuteResult> {
    const callbackId = this.tokens.verify(request.token);
    if (!callbackId) throw new CallbackInvalidError();
    const outcome = await this.store.transaction(async (client) => {
      const row = await readCallback(client, callbackId, true);
      if (!row) throw new CallbackInvalidError();
      if (row.used_at) throw new CallbackUsedError(row.used_at, row.outcome);
      const now = this.options.clock();
      if (now.getTime() >= row.expires_at.getTime()) throw new CallbackExpiredError(row.expires_at);
      if (row.action === 'open') return { row, result: (await this.targets.detail(row)) as JsonValue, refused: null };

      let result: JsonValue = null;
      let refused: DomainError | null = await this.targets.staleness(row);
      if (!refused) {
        try {
          result = await runRemoteAction(this.commands, row, request.reason);
        } catch (error) {
          // A transient failure spends nothing: the link still works once the command can be sent.
          if (!(error instanceof DomainError) || error.retryable) throw error;
          refused = error;
        }
      }
      const used = refused ? refused.code : 'executed';
      await client.query('UPDATE notifications.callbacks SET used_at = $2, outcome = $3 WHERE callback_id = $1', [row.callback_id, now, used]);
      const data: NotificationEventData<'remote_control.used'> = {
        callbackId: row.callback_id,
        deliveryId: row.delivery_id,
        action: row.action,
        target: { kind: row.target_kind, id: row.target_id },
        outcome: used,
        requestDigest: request.requestDigest,
      };
      await this.store.append(callbackStream(row.callback_id), 'no_stream', [{ type: 'remote_control.used', data, actor: { kind: 'remote_control', id: row.recipient } }], {
        workspaceId: row.workspace_id,
        client,
      });
      return { row, result, refused };
    });
    if (outcome.refused) throw new CallbackRefusedError(outcome.refused.code, outcome.refused.message);
    return { callbackId, action: outcome.row.action, target: { kind: outcome.row.target_kind, id: outcome.row.target_id }, outcome: 'executed', result: outcome.result };
  }

  private async row(token: string): Promise<CallbackRow> {
    const callbackId = this.tokens.verify(token);
    const row = callbackId ? await readCallback(this.pool, callbackId) : null;
    if (!row) throw new CallbackInvalidError();
    return row;
  }
}
