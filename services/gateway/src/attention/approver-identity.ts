import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import type { Role } from '@packetagent/contracts';
import type { WorkspacePrincipal } from '../access/principal';

/** Who answers an attention, as policy checks it against approval rules: the caller's role here and, for a user, their email. */
@Injectable()
export class ApproverIdentity {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async of(who: WorkspacePrincipal): Promise<{ role: Role; email?: string }> {
    if (who.kind !== 'user') return { role: who.role };
    const { rows } = await this.pool.query<{ email: string }>(`SELECT email FROM identity.users WHERE id = $1`, [who.id]);
    return rows[0] ? { role: who.role, email: rows[0].email } : { role: who.role };
  }
}
