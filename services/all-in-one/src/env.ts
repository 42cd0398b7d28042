import { z } from 'zod';

const milliseconds = z.coerce.number().int().nonnegative();

/** Configuration of the all-in-one app, parsed once at boot; every variable has a default. */
export const EnvSchema = z.object({
  PACKETAGENT_PORT: z.coerce.number().int().min(1).max(65_535).default(8484),
  PACKETAGENT_HOST: z.string().default('127.0.0.1'),
  PACKETAGENT_DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/packetagent'),
  PACKETAGENT_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).default(10),
  PACKETAGENT_NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  /** Namespaces streams and subjects, so several installations can share one NATS. */
  PACKETAGENT_BUS_PREFIX: z.string().regex(/^([a-z][a-z0-9]{0,31})?$/).default(''),
  /** 1 on one server; 3 in a JetStream cluster. */
  PACKETAGENT_NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  PACKETAGENT_MAX_EVENT_BYTES: z.coerce.number().int().min(1_024).default(512 * 1024),
  PACKETAGENT_MIGRATE_ON_START: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  PACKETAGENT_RELAY_POLL_MS: milliseconds.default(500),
  PACKETAGENT_RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(500),
  PACKETAGENT_RELAY_VERIFY_INTERVAL_MS: milliseconds.default(60_000),
  /** Readiness fails when committed events have waited longer than this for the relay. */
  PACKETAGENT_READY_MAX_RELAY_LAG_MS: milliseconds.default(30_000),
  PACKETAGENT_LOG_FORMAT: z.enum(['text', 'json']).default('text'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
});

export type Env = z.infer<typeof EnvSchema>;

export class ConfigurationError extends Error {}

export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const result = EnvSchema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigurationError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
