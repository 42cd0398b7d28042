import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import type { Pool } from 'pg';
import { RoleSchema, type Role } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import type { Principal } from '../../../access/principal';
import { UnauthenticatedError } from '../../../identity/errors';

export const Caller = z.object({
  kind: z.enum(['user', 'api_key']),
  id: z.string(),
  email: z.string().nullable().describe('users only'),
  totpEnabled: z.boolean().nullable().describe('users only'),
  workspaces: z.array(z.object({ id: z.string(), name: z.string(), role: RoleSchema })).describe("a user's memberships, or an API key's one workspace"),
});
export type Caller = z.output<typeof Caller>;
export class CallerDto extends createZodDto(Caller) {}

/** Who the caller is: a user with their workspaces, or an API key with its one workspace. */
@Injectable()
export class DescribeCaller {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(principal: Principal): Promise<Caller> {
    if (principal.kind === 'api_key') {
      const { rows } = await this.pool.query<{ id: string; name: string }>(`SELECT id, name FROM identity.workspaces WHERE id = $1`, [principal.workspaceId]);
      const workspaces = rows.map((row) => ({ ...row, role: principal.role as Role }));
      return { kind: 'api_key', id: principal.id, email: null, totpEnabled: null, workspaces };
    }
    const { rows } = await this.pool.query<{ email: string; totp_enabled: boolean }>(`SELECT email, totp_enabled FROM identity.users WHERE id = $1`, [principal.id]);
    const user = rows[0];
    if (!user) throw new UnauthenticatedError('the account no longer exists');
    const workspaces = await this.pool.query<{ id: string; name: string; role: Role }>(
      `SELECT w.id, w.name, m.role FROM identity.memberships m JOIN identity.workspaces w ON w.id = m.workspace_id
        WHERE m.user_id = $1 ORDER BY w.created_at, w.id`,
      [principal.id],
    );
    return { kind: 'user', id: principal.id, email: user.email, totpEnabled: user.totp_enabled, workspaces: workspaces.rows };
  }
}
