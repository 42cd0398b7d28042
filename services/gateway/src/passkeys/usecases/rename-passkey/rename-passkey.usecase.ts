import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { PasskeyNotFoundError } from '../../passkey.errors';
import { passkeyOf, toPasskeyView } from '../../passkey.rows';
import type { PasskeyView, RenamePasskeyCommand } from '../../passkeys.dto';

/** Renames one of the caller's passkeys; the name only helps them tell their passkeys apart. */
@Injectable()
export class RenamePasskey {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(userId: string, passkeyId: string, command: RenamePasskeyCommand): Promise<PasskeyView> {
    const current = await passkeyOf(this.pool, userId, passkeyId);
    if (!current) throw new PasskeyNotFoundError();
    await this.pool.query(`UPDATE identity.passkeys SET name = $3 WHERE id = $1 AND user_id = $2`, [passkeyId, userId, command.name]);
    return toPasskeyView({ ...current, name: command.name });
  }
}
