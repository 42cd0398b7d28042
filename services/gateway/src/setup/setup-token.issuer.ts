import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';
import { randomToken, sha256 } from '../identity/secrets';

export function setupTokenPath(options: Pick<ResolvedGatewayOptions, 'dataDir'>): string {
  return join(options.dataDir, 'setup-token');
}

export async function ownerExists(pool: Pick<Pool, 'query'>): Promise<boolean> {
  const { rowCount } = await pool.query(`SELECT 1 FROM identity.memberships WHERE role = 'owner' LIMIT 1`);
  return rowCount === 1;
}

/**
 * First run: while no workspace has an owner, opens setup with a one-time token. Only its hash
 * is stored; a generated token is written to `<dataDir>/setup-token` (mode 0600) and the log
 * names the file, never the token. Each boot before setup issues a fresh token, so with several
 * replicas only the token of the one that booted last works.
 */
@Injectable()
export class SetupTokenIssuer implements OnApplicationBootstrap {
  private readonly logger = new Logger('setup');

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (await ownerExists(this.pool)) return;
    const token = this.options.setupToken ?? randomToken(32);
    const { rowCount } = await this.pool.query(
      `INSERT INTO identity.setup (singleton, token_hash) VALUES (true, $1)
       ON CONFLICT (singleton) DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = now()
        WHERE identity.setup.consumed_at IS NULL`,
      [sha256(token)],
    );
    if (rowCount !== 1) {
      this.logger.warn('setup was completed before but no workspace has an owner; setup stays closed');
      return;
    }
    if (this.options.setupToken) {
      this.logger.log('first run: setup is open with the configured setup token (POST /api/v1/setup)');
      return;
    }
    const path = setupTokenPath(this.options);
    await mkdir(this.options.dataDir, { recursive: true, mode: 0o700 });
    // Created afresh so the mode applies: writeFile keeps the mode of a file that already exists.
    await rm(path, { force: true });
    await writeFile(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(path, 0o600);
    this.logger.log(`first run: the setup token is in ${path}; POST /api/v1/setup with it to create the owner`);
  }
}
