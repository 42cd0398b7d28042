import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import type { Pool } from 'pg';
import { RoleSchema, type Role } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import type { Principal } from '../../../access/principal';

export const WorkspaceList = z.object({
  items: z.array(z.object({ id: z.string(), name: z.string(), role: RoleSchema, createdAt: z.iso.datetime() })),
});
export type WorkspaceList = z.output<typeof WorkspaceList>;
export class WorkspaceListDto extends createZodDto(WorkspaceList) {}

interface Row {
  id: string;
  name: string;
  role: Role;
  created_at: Date;
}

/** The workspaces the caller can reach: a user's memberships, or an API key's one workspace. */
@Injectable()
export class ListWorkspaces {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(principal: Principal): Promise<WorkspaceList> {
    const { rows } =
      principal.kind === 'user'
        ? await this.pool.query<Row>(
            `SELECT w.id, w.name, m.role, w.created_at FROM identity.memberships m JOIN identity.workspaces w ON w.id = m.workspace_id
              WHERE m.user_id = $1 ORDER BY w.created_at, w.id`,
            [principal.id],
          )
        : await this.pool.query<Row>(`SELECT id, name, $2::text AS role, created_at FROM identity.workspaces WHERE id = $1`, [
            principal.workspaceId,
            principal.role,
          ]);
    return { items: rows.map((row) => ({ id: row.id, name: row.name, role: row.role, createdAt: row.created_at.toISOString() })) };
  }
}
