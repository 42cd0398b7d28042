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
  /** Sessions, login throttling. */
  PACKETAGENT_REDIS_URL: z.string().regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL').default('redis://127.0.0.1:6379'),
  /** Where the one-time setup token file is written on first run. */
  PACKETAGENT_DATA_DIR: z.string().min(1).default('.data'),
  /** Sets the one-time setup token instead of generating one (for automation). */
  PACKETAGENT_SETUP_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  /** Secure attribute of the session cookie (browsers accept Secure cookies from http://localhost and 127.0.0.1). */
  PACKETAGENT_COOKIE_SECURE: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  PACKETAGENT_SESSION_TTL_SECONDS: z.coerce.number().int().min(60).max(2_592_000).default(43_200),
  PACKETAGENT_REDIS_KEY_PREFIX: z.string().regex(/^[A-Za-z0-9:_-]{1,64}$/).default('pa:gw:'),
  /** The externally visible base URL (listed as the server in the OpenAPI document). */
  PACKETAGENT_PUBLIC_URL: z.string().url().optional(),
  /** Largest request body, in bytes; webhook bodies are further limited to 256 KiB. */
  PACKETAGENT_HTTP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1_024).max(64 * 1024 * 1024).default(1_048_576),
  /** Trust X-Forwarded-For from a reverse proxy (true, or a comma-separated list of proxy addresses). */
  PACKETAGENT_TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v) => (v === 'true' ? true : v === 'false' ? false : v)),
  PACKETAGENT_SCHEDULER_TICK_TOLERANCE_MS: milliseconds.default(60_000),
  PACKETAGENT_SCHEDULER_MAX_CATCH_UP_MS: milliseconds.default(604_800_000),
  PACKETAGENT_SCHEDULER_LEADER_RETRY_MS: milliseconds.default(1_000),
  PACKETAGENT_SCHEDULER_ACTIVATE_TIMEOUT_MS: milliseconds.default(5_000),
  /**
   * Ed25519 seed (32 bytes, base64) with which policy signs credential grants and the vault
   * verifies them; unset, the process makes a key of its own (fine when one process runs both).
   */
  PACKETAGENT_GRANT_SIGNING_KEY: z.string().optional(),
  /** Deadline of an approval when the grant sets none, in seconds; on expiry the call is denied. */
  PACKETAGENT_APPROVAL_TIMEOUT_SECONDS: z.coerce.number().int().positive().max(30 * 86_400).default(900),
  /** Lifetime of a credential grant issued with an allowed call, in seconds. */
  PACKETAGENT_CREDENTIAL_GRANT_TTL_SECONDS: z.coerce.number().int().min(1).max(3_600).default(60),
  /** How often each replica releases budget holds past their TTL, in milliseconds. */
  PACKETAGENT_BUDGET_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).default(1_000),
  /** Share of a limit, in percent, at which `budget.warning` is announced once per scope and window. */
  PACKETAGENT_BUDGET_WARNING_PERCENT: z.coerce.number().int().min(1).max(100).default(80),
  /** `production` refuses to start without a strong master key; `development` generates `<data dir>/master.key`. */
  PACKETAGENT_VAULT_MODE: z.enum(['production', 'development']).default('development'),
  /** Master keys, 32 bytes base64 each, comma-separated; the first encrypts, the others stay readable during rotation. */
  PACKETAGENT_MASTER_KEY: z.string().optional(),
  /** A file with master keys, one per line (e.g. a mounted Secret); read after the keys of PACKETAGENT_MASTER_KEY. */
  PACKETAGENT_MASTER_KEY_FILE: z.string().optional(),
  /** Activation inputs up to this size travel inside the run's first event, in bytes. */
  PACKETAGENT_INLINE_INPUT_BYTES: z.coerce.number().int().min(0).default(16 * 1024),
  /** Larger activation inputs are stored by reference up to this size; beyond it they are refused, in bytes. */
  PACKETAGENT_MAX_INPUT_BYTES: z.coerce.number().int().min(1_024).max(16 * 1024 * 1024).default(256 * 1024),
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
