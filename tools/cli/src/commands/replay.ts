import { Pool } from 'pg';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, topology } from '@packetagent/bus';
import { EventRegistry } from '@packetagent/contracts';
import { PROJECTION_NAMES, projectionNamed, rebuildProjection, registerProjectorEvents, type RebuildResult } from '@packetagent/projections';
import { UsageError } from '../errors';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/packetagent';
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

export interface ReplayOptions {
  projection: string;
  databaseUrl?: string;
  natsUrl?: string;
  busPrefix?: string;
  /** Build and catch up the shadow tables but leave the live ones in place. */
  swap?: boolean;
}

export interface ReplayIo {
  env: NodeJS.ProcessEnv;
  /** One progress line (no newline). */
  progress(line: string): void;
}

/**
 * `packetagent replay --projection NAME`: rebuilds a projection from zero beside the live one
 * and swaps it in, while the projector and readers keep running. `all` rebuilds each in turn.
 * Talks to Postgres (and JetStream, when reachable) directly: it is an operator's tool.
 */
export async function replayProjection(options: ReplayOptions, io: ReplayIo): Promise<RebuildResult[]> {
  const names = options.projection === 'all' ? [...PROJECTION_NAMES] : [options.projection];
  for (const name of names) {
    if (!PROJECTION_NAMES.includes(name)) throw new UsageError(`unknown projection "${name}"; one of: ${PROJECTION_NAMES.join(', ')}, all`);
  }
  const databaseUrl = options.databaseUrl || io.env['PACKETAGENT_DATABASE_URL'] || DEFAULT_DATABASE_URL;
  const natsUrl = options.natsUrl || io.env['PACKETAGENT_NATS_URL'] || DEFAULT_NATS_URL;
  const prefix = options.busPrefix ?? io.env['PACKETAGENT_BUS_PREFIX'] ?? '';
  const pool = new Pool({ connectionString: databaseUrl, max: 4, application_name: 'packetagent-replay' });
  pool.on('error', () => undefined);
  let nc: NatsConnection | null = null;
  try {
    nc = await connectNats({ url: natsUrl, name: 'packetagent-replay' }).catch((error: unknown) => {
      io.progress(`cannot reach NATS at ${natsUrl} (${error instanceof Error ? error.message : String(error)}); replaying from the events table`);
      return null;
    });
    const registry = registerProjectorEvents(new EventRegistry());
    const results: RebuildResult[] = [];
    for (const name of names) {
      results.push(
        await rebuildProjection({
          pool,
          registry,
          projection: projectionNamed(name),
          bus: nc ? { nc, topology: topology(prefix) } : undefined,
          swap: options.swap ?? true,
          progress: io.progress,
        }),
      );
    }
    return results;
  } finally {
    await nc?.drain().catch(() => undefined);
    await pool.end().catch(() => undefined);
  }
}
