import { Inject, Injectable } from '@nestjs/common';
import { OnEvent } from '@packetagent/bus';
import type { DecodedEvent, VaultEventData } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { AttentionAlreadyAnsweredError } from '../shared/errors';
import { AnswerAttention } from './usecases/answer-attention';

/**
 * An operator connected an OAuth credential again: the attention each waiting run raised for it
 * is approved by that operator, which wakes the run to make its call with the new connection.
 * A token refresh stores a version too, but only a connection an operator made answers anything.
 */
@Injectable()
export class ReconnectedCredentialsConsumer {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly answer: AnswerAttention,
  ) {}

  @OnEvent({ durable: 'policy-credentials', filter: '*.credential.credential.stored' })
  async onCredentialStored(event: DecodedEvent<VaultEventData<'credential.stored'>>): Promise<void> {
    if (event.data.kind !== 'oauth' || event.data.oauth !== 'connected') return;
    const { rows } = await this.pool.query<{ attention_id: string }>(
      `SELECT attention_id FROM policy.attention
        WHERE workspace_id = $1 AND state = 'open' AND arguments->>'kind' = 'credential_reconnect' AND arguments->'evidence'->>'credential' = $2`,
      [event.workspaceId, event.data.name],
    );
    for (const row of rows) {
      await this.answer.execute(event.workspaceId, row.attention_id, { kind: 'approve', scope: 'once' }, event.actor).catch((error: unknown) => {
        // Someone answered it first (or it expired): the run reads that answer when it wakes.
        if (!(error instanceof AttentionAlreadyAnsweredError)) throw error;
      });
    }
  }
}
