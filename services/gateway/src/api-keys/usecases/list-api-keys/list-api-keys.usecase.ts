import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import type { Pool } from 'pg';
import { RoleSchema, type Role } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';

export const ApiKeyList = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      role: RoleSchema,
      prefix: z.string().describe('the start of the key, to recognise it'),
      createdAt: z.iso.datetime(),
      createdBy: z.object({ kind: z.enum(['user', 'api_key']), id: z.string() }),
      expiresAt: z.iso.datetime().nullable(),
      revokedAt: z.iso.datetime().nullable(),
      lastUsedAt: z.iso.datetime().nullable(),
    }),
  ),
});
export type ApiKeyList = z.output<typeof ApiKeyList>;
export class ApiKeyListDto extends createZodDto(ApiKeyList) {}

interface Row {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  created_at: Date;
  created_by_kind: 'user' | 'api_key';
  created_by: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** The workspace's API keys, newest first; never their secrets or hashes. */
@Injectable()
export class ListApiKeys {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(workspaceId: string): Promise<ApiKeyList> {
    const { rows } = await this.pool.query<Row>(
      `SELECT id, name, role, prefix, created_at, created_by_kind, created_by, expires_at, revoked_at, last_used_at
         FROM identity.api_keys WHERE workspace_id = $1 ORDER BY created_at DESC, id`,
      [workspaceId],
    );
    return {
      items: rows.map((row) => ({
        id: row.id,
        name: row.name,
        role: row.role,
        prefix: row.prefix,
        createdAt: row.created_at.toISOString(),
        createdBy: { kind: row.created_by_kind, id: row.created_by },
        expiresAt: iso(row.expires_at),
        revokedAt: iso(row.revoked_at),
        lastUsedAt: iso(row.last_used_at),
      })),
    };
  }
}
