import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { passkeysOf, toPasskeyView } from '../../passkey.rows';
import type { PasskeyView } from '../../passkeys.dto';

/** The caller's own passkeys, oldest first. */
@Injectable()
export class ListPasskeys {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(userId: string): Promise<{ items: PasskeyView[] }> {
    return { items: (await passkeysOf(this.pool, userId)).map(toPasskeyView) };
  }
}
