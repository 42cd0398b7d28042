import { z } from 'zod';

const milliseconds = z.coerce.number().int().nonnegative();

/** Configuration of the all-in-one app, parsed once at boot; every variable has a default. */
export const EnvSchema = z.object({
  PACKETAGENT_PORT: z.coerce.number().int().min(1).max(65_535).default(8484),
  PACKETAGENT_HOST: z.string().default('127.0.0.1'),
  /** The PacketADE door over gRPC (packetagent.v1.PacketAde, health, reflection), on its own port. */
  PACKETAGENT_GRPC_ENABLED: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  PACKETAGENT_GRPC_PORT: z.coerce.number().int().min(1).max(65_535).default(8485),
  /** Defaults to PACKETAGENT_HOST. */
  PACKETAGENT_GRPC_HOST: z.string().optional(),
  /** PEM certificate chain and key for gRPC over TLS; both or neither (plaintext). */
  PACKETAGENT_GRPC_TLS_CERT_FILE: z.string().optional(),
  PACKETAGENT_GRPC_TLS_KEY_FILE: z.string().optional(),
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
  /** Live event streams (SSE): heartbeat interval, events buffered per slow client before it is dropped, open streams per workspace per process. */
  PACKETAGENT_SSE_HEARTBEAT_MS: z.coerce.number().int().min(1_000).default(15_000),
  PACKETAGENT_SSE_BUFFER_EVENTS: z.coerce.number().int().min(10).default(1_000),
  PACKETAGENT_SSE_MAX_CONNECTIONS_PER_WORKSPACE: z.coerce.number().int().min(1).default(50),
  /** Directory of the built operations console served at /; the build next to the code by default. */
  PACKETAGENT_CONSOLE_DIR: z.string().min(1).optional(),
  PACKETAGENT_LOG_FORMAT: z.enum(['text', 'json']).default('text'),
  /** Whether this process drives runs (a gateway-only replica sets false). */
  PACKETAGENT_SUPERVISOR_ENABLED: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** How long a supervisor's claim on a run lasts without renewal; a run whose holder died is taken over after it. */
  PACKETAGENT_SUPERVISOR_LEASE_MS: z.coerce.number().int().min(500).default(15_000),
  /** Runs one process drives at once. */
  PACKETAGENT_SUPERVISOR_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
  /** How often runs whose claim lapsed are looked for. */
  PACKETAGENT_SUPERVISOR_RECOVERY_INTERVAL_MS: z.coerce.number().int().min(100).default(500),
  /** How often the leader replica sweeps for runs no one drives (lost wakes, lost waits, quarantines), in milliseconds. */
  PACKETAGENT_SUPERVISOR_WATCHDOG_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  /** How long a run may go without an owner before the watchdog counts it and wakes it, in milliseconds. */
  PACKETAGENT_SUPERVISOR_WATCHDOG_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  /** Model transcripts, tool arguments and tool results larger than this are stored by reference (content-addressed), in bytes. */
  PACKETAGENT_SUPERVISOR_PAYLOAD_THRESHOLD_BYTES: z.coerce.number().int().min(1_024).max(256 * 1_024).default(64 * 1_024),
  /** Model turns in a row without progress before a run ends failed(stalled). */
  PACKETAGENT_SUPERVISOR_STALL_TURNS: z.coerce.number().int().min(1).max(100).default(3),
  /**
   * Test hook: the process kills itself (SIGKILL) right after appending an event of this type
   * (`type` for the first, `type#n` for the n-th), to prove recovery. Refused in production mode.
   */
  PACKETAGENT_FAULT_CRASH_AFTER: z.string().regex(/^[a-z_]+\.[a-z_]+(#[1-9][0-9]*)?$/).optional(),
  /** `host:port` pairs http_fetch may reach although they resolve to private addresses (comma-separated). */
  /** Where run_command runs: `auto` takes bubblewrap, then Docker; with neither, commands fail closed (sandbox_unavailable). */
  PACKETAGENT_SANDBOX_DRIVER: z.enum(['auto', 'bubblewrap', 'docker']).default('auto'),
  /** Environment names commands may be given besides CI, NODE_ENV, LANG, LC_ALL, TZ, TERM, DEBUG, NO_COLOR, FORCE_COLOR; comma-separated. Secret-like names are refused whatever this says. */
  PACKETAGENT_SANDBOX_ENV_ALLOWLIST: z.string().default(''),
  /** Origins declared egress may be fetched from (GET only, before the command starts), comma-separated. */
  PACKETAGENT_SANDBOX_EGRESS_ORIGINS: z.string().default(''),
  /** Wall time a command gets when it names none, and the most it may ask for, in milliseconds. */
  PACKETAGENT_SANDBOX_WALL_TIME_MS: z.coerce.number().int().min(100).default(600_000),
  PACKETAGENT_SANDBOX_MAX_WALL_TIME_MS: z.coerce.number().int().min(100).max(86_400_000).default(3_600_000),
  /** Memory and processes (threads included) one command may use. */
  PACKETAGENT_SANDBOX_MEMORY_BYTES: z.coerce.number().int().min(16 * 1024 * 1024).default(1024 * 1024 * 1024),
  PACKETAGENT_SANDBOX_PIDS: z.coerce.number().int().min(4).max(65_536).default(256),
  /** stdout and stderr together one command may write; past it the command is killed and the output so far kept. */
  PACKETAGENT_SANDBOX_OUTPUT_BYTES: z.coerce.number().int().min(1024).max(1024 * 1024 * 1024).default(128 * 1024 * 1024),
  /** Docker driver: the engine (`unix:///var/run/docker.sock` or `tcp://host:2375`) and the image commands run in. */
  PACKETAGENT_SANDBOX_DOCKER_HOST: z.string().optional(),
  PACKETAGENT_SANDBOX_DOCKER_IMAGE: z.string().default('node:20-bookworm-slim'),
  /** Computers over SSH: the probe leader's interval, when status goes stale (`unknown`), and the connect timeout. */
  PACKETAGENT_COMPUTER_PROBE_INTERVAL_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(15_000),
  PACKETAGENT_COMPUTER_STALE_AFTER_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(45_000),
  PACKETAGENT_COMPUTER_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(10_000),
  /** Chromium for the browser tool. */
  PACKETAGENT_CHROMIUM: z.string().default('/usr/bin/chromium'),
  PACKETAGENT_HTTP_ALLOW_PRIVATE: z.string().default(''),
  /** An OAuth access token this close to expiry is refreshed before a call gets it (at most half its lifetime). */
  PACKETAGENT_OAUTH_REFRESH_MARGIN_SECONDS: z.coerce.number().int().min(0).max(3_600).default(60),
  /** Origins known to honour Idempotency-Key (comma-separated): their POST and PATCH are retried after a crash. */
  PACKETAGENT_HTTP_IDEMPOTENCY_KEY_ORIGINS: z.string().default(''),
  PACKETAGENT_HTTP_MAX_RESPONSE_BYTES: z.coerce.number().int().min(1_024).default(1_048_576),
  PACKETAGENT_HTTP_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Replaces the origin of Slack incoming-webhook URLs (a proxy, or a local stand-in). */
  PACKETAGENT_SLACK_WEBHOOK_BASE_URL: z.string().url().optional(),
  PACKETAGENT_GITHUB_BASE_URL: z.string().url().default('https://api.github.com'),
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
  /**
   * Key (32 bytes or more, base64) that signs remote-control links in notifications; every
   * replica needs the same one. Unset, it is derived from PACKETAGENT_GRANT_SIGNING_KEY, or
   * without that `<data dir>/callback-signing.key` is made once and kept.
   */
  PACKETAGENT_CALLBACK_SIGNING_KEY: z.string().optional(),
  /** How long a remote-control link works, in seconds (an approval's link never outlives its deadline). */
  PACKETAGENT_NOTIFY_CALLBACK_TTL_SECONDS: z.coerce.number().int().min(60).max(30 * 86_400).default(86_400),
  /** A notification not delivered by then is dead-lettered (`expired`), in seconds. */
  PACKETAGENT_NOTIFY_DELIVERY_TTL_SECONDS: z.coerce.number().int().min(1).max(30 * 86_400).default(86_400),
  /** Backoff between attempts: the first retry's wait and the longest, in milliseconds (with jitter, and never sooner than Retry-After). */
  PACKETAGENT_NOTIFY_RETRY_BASE_MS: z.coerce.number().int().min(1).default(1_000),
  PACKETAGENT_NOTIFY_RETRY_MAX_MS: z.coerce.number().int().min(1).default(600_000),
  /** How long a replica holds a delivery it is sending; a lapsed lease (a crash) makes it due again. */
  PACKETAGENT_NOTIFY_LEASE_MS: z.coerce.number().int().min(100).default(60_000),
  /** One attempt's limit, from the address checks to the last byte (less than the lease). */
  PACKETAGENT_NOTIFY_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().min(50).default(15_000),
  /** How long a route's credential stays in the notifications process's memory after a vault read, in seconds (0: read it for every attempt). */
  PACKETAGENT_NOTIFY_CREDENTIAL_CACHE_SECONDS: z.coerce.number().int().min(0).max(3_600).default(60),
  PACKETAGENT_NOTIFY_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(64),
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

export type Env = z.infer<typeof EnvSchema> & { providerEnv: Record<string, string> };

export class ConfigurationError extends Error {}

/** Provider keys and endpoints, read by libs/providers (see its providerConfigFromEnv). */
const PROVIDER_VARIABLE = /^((ANTHROPIC|OPENAI|GEMINI|GOOGLE|OPENROUTER|MINIMAX)_API_KEY|PACKETAGENT_(ANTHROPIC|OPENAI|GEMINI|OPENROUTER|MINIMAX|LOCAL)_[A-Z_]+|PACKETAGENT_PROVIDER_[A-Z_]+|PACKETAGENT_SCRIPTS_DIR|PACKETAGENT_MODEL_CATALOG_EXTRA)$/;

export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const result = EnvSchema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigurationError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const providerEnv = Object.fromEntries(Object.entries(source).filter(([key, value]) => PROVIDER_VARIABLE.test(key) && value !== undefined)) as Record<string, string>;
  if (result.data.PACKETAGENT_FAULT_CRASH_AFTER && result.data.PACKETAGENT_VAULT_MODE === 'production') {
    throw new ConfigurationError('invalid configuration:\n  PACKETAGENT_FAULT_CRASH_AFTER: a test hook, refused in production mode');
  }
  return { ...result.data, providerEnv };
}
