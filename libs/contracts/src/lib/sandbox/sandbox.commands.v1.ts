import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineCommand } from '../commands';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { Identifiers } from '../envelope';
import { PayloadRefSchema } from '../payloads/payload-ref';

/**
 * The sandbox service: commands in bubblewrap or Docker with no network and hard limits, and a
 * per-run browser. See docs/adr/0021-sandbox-drivers.md for what each driver isolates.
 */

const workspaceId = z.string().regex(Identifiers.workspace);
const runId = z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/);
const instant = z.iso.datetime({ offset: true });

/**
 * Exec ids are chosen by the caller (a run's effect key `<runId>:<callId>`, or the gateway's id),
 * so a repeat names the same exec. Printable ASCII: file names, subjects and control groups use
 * `execKey(id)`, never the id itself.
 */
export const ExecIdSchema = z.string().regex(/^[\x21-\x7e]{1,420}$/, 'expected 1-420 printable ASCII characters without spaces');

/** A fixed-length name for an exec id, safe as a file name, a NATS subject token or a control group. */
export function execKey(execId: string): string {
  return createHash('sha256').update(execId, 'utf8').digest('hex').slice(0, 32);
}

export const SANDBOX_DRIVERS = ['bubblewrap', 'docker'] as const;
export const SandboxDriverNameSchema = z.enum(SANDBOX_DRIVERS);
export type SandboxDriverName = z.infer<typeof SandboxDriverNameSchema>;

/** Where an exec ran: a local sandbox driver, or a registered computer over SSH. */
export const EXEC_DRIVERS = [...SANDBOX_DRIVERS, 'ssh'] as const;
export const ExecDriverNameSchema = z.enum(EXEC_DRIVERS);
export type ExecDriverName = z.infer<typeof ExecDriverNameSchema>;

/** Most arguments one command may have, and most bytes of all of them together. */
export const MAX_EXEC_ARGS = 256;
export const MAX_EXEC_ARGV_BYTES = 16 * 1024;
export const MAX_EXEC_ENV_ENTRIES = 64;

/** Environment names a command may be given: plain identifiers that do not look like secrets. */
export const EXEC_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Names refused whatever the allowlist says: a secret goes through the vault, never the environment. */
export const SECRET_LIKE_ENV_NAME = /(SECRET|TOKEN|PASSWORD|PASSWD|PRIVATE_?KEY|CREDENTIAL|API_?KEY|ACCESS_?KEY)|(^|_)(AUTH|SESSION|COOKIE|PRIVATE)(_|$)/i;

/** What bounds one command; every field is at most the service's maximum, which applies when absent. */
export const ExecLimitsSchema = z.strictObject({
  /** Wall time from start to the whole process tree being killed, in milliseconds. */
  wallTimeMs: z.number().int().min(100).max(24 * 3_600_000),
  cpuSeconds: z.number().int().min(1).max(86_400),
  memoryBytes: z.number().int().min(16 * 1024 * 1024).max(64 * 1024 ** 3),
  /** Processes and threads at once. */
  pids: z.number().int().min(4).max(65_536),
  /** Largest file the command may write. */
  fileSizeBytes: z.number().int().min(1024).max(1024 ** 4),
  /** Open file descriptors. */
  openFiles: z.number().int().min(16).max(1_048_576),
  /** stdout and stderr together; past it the command is killed and what it wrote is kept. */
  outputBytes: z.number().int().min(1024).max(1024 ** 3),
  /** Size of the private /tmp. */
  tmpBytes: z.number().int().min(1024 * 1024).max(64 * 1024 ** 3),
});
export type ExecLimits = z.infer<typeof ExecLimitsSchema>;

/** Which limit ended a command, or `cancelled` when someone stopped it. */
export const EXEC_LIMIT_NAMES = ['wall_time', 'cpu_time', 'memory', 'pids', 'file_size', 'output', 'cancelled'] as const;
export const ExecLimitNameSchema = z.enum(EXEC_LIMIT_NAMES);
export type ExecLimitName = z.infer<typeof ExecLimitNameSchema>;

/** A file fetched GET-only before the command starts, mounted read-only at /input/egress/<as>. */
export const EgressRequestSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(4096),
  /** File name under /input/egress; the URL's last path segment when absent. */
  as: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a plain file name')
    .optional(),
});
export type EgressRequest = z.infer<typeof EgressRequestSchema>;

export const EgressRecordSchema = z.object({
  url: z.string(),
  as: z.string(),
  size: z.number().int().nonnegative(),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  /** The address the request was connected to, after the public-address checks. */
  connectedAddress: z.string(),
  status: z.number().int(),
});
export type EgressRecord = z.infer<typeof EgressRecordSchema>;

export const ExecRequestSchema = z.strictObject({
  execId: ExecIdSchema,
  workspaceId,
  /** The run whose workspace the command works in; absent for an operator exec in a scratch workspace of its own. */
  runId: runId.optional(),
  /** The program (a plain name found on the sandbox's PATH) and its arguments; no shell is involved. */
  argv: z
    .array(z.string().max(4096))
    .min(1)
    .max(MAX_EXEC_ARGS)
    .refine((argv) => argv.reduce((total, arg) => total + Buffer.byteLength(arg, 'utf8'), 0) <= MAX_EXEC_ARGV_BYTES, `at most ${MAX_EXEC_ARGV_BYTES} bytes of arguments`),
  /** Directory relative to the workspace. */
  cwd: z.string().max(1024).default('.'),
  env: z.record(z.string(), z.string().max(32 * 1024)).default({}),
  limits: ExecLimitsSchema.partial().default({}),
  egress: z.array(EgressRequestSchema).max(16).default([]),
  /**
   * Credential values the command gets as environment variables, by name. Only a run's call
   * sends them, after policy allowed the credentials to the tool (and the computer's policy allows
   * secrets). Never recorded: events and records keep the names only.
   */
  secrets: z.record(z.string().regex(EXEC_ENV_NAME), z.string().max(64 * 1024)).default({}),
  /**
   * Run it on a registered computer instead of the local sandbox: its name and policy's
   * single-use grant for the computer's key. `cwd` is then a directory on the computer, absolute
   * or relative to its first root, and must resolve inside one of its roots.
   */
  computer: z.strictObject({ name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/), keyGrant: z.string().min(1).max(4096) }).optional(),
  requestedBy: ActorSchema,
});
export type ExecRequest = z.input<typeof ExecRequestSchema>;
export type ParsedExecRequest = z.output<typeof ExecRequestSchema>;

/** One of the two output streams: a preview for events and the model, and the whole of it by reference. */
export const ExecStreamOutputSchema = z.object({
  /** The first part of the stream as UTF-8 text (invalid sequences replaced). */
  preview: z.string(),
  /** Bytes the command wrote to the stream (what was kept: at most the output limit). */
  bytes: z.number().int().nonnegative(),
  /** The preview is not the whole stream. */
  truncated: z.boolean(),
  /** SHA-256 of the kept bytes; `chunks` concatenated hash to it. */
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  /** The kept bytes in order, each chunk a payload `{base64}`; empty for an empty stream. */
  chunks: z.array(PayloadRefSchema),
});
export type ExecStreamOutput = z.infer<typeof ExecStreamOutputSchema>;

/** `lost`: the link to the computer broke while the command ran; whether it finished is not known. */
export const EXEC_STATES = ['running', 'exited', 'killed', 'failed', 'lost'] as const;
export const ExecStateSchema = z.enum(EXEC_STATES);
export type ExecState = z.infer<typeof ExecStateSchema>;

export const ExecResultSchema = z.object({
  execId: ExecIdSchema,
  workspaceId,
  runId: runId.nullable(),
  driver: ExecDriverNameSchema,
  /** The computer it ran on; null for the local sandbox. */
  computer: z.string().nullable().default(null),
  /**
   * `exited` on its own (any exit code), `killed` by a limit or a cancel, `failed` when it never
   * started, `lost` when the link to its computer broke while it ran (its outcome is not known).
   */
  state: ExecStateSchema.exclude(['running']),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  /** The limit that ended it; null when it exited on its own. */
  limit: ExecLimitNameSchema.nullable(),
  /** Why it never started, or what the limit was, in words. */
  message: z.string().nullable(),
  durationMs: z.number().int().nonnegative(),
  stdout: ExecStreamOutputSchema,
  stderr: ExecStreamOutputSchema,
  egress: z.array(EgressRecordSchema),
  /** The limits that applied, and which of them the driver could not enforce on this host. */
  limits: ExecLimitsSchema,
  unenforced: z.array(z.string()),
  /**
   * Killed (limit, cancel) or lost on a computer: whether the whole process group was seen gone
   * afterwards. Null where nothing had to be killed, or in a local sandbox, whose tree always dies with it.
   */
  killConfirmed: z.boolean().nullable().default(null),
  startedAt: instant,
  endedAt: instant,
});
export type ExecResult = z.infer<typeof ExecResultSchema>;

export const ExecSummarySchema = z.object({
  execId: ExecIdSchema,
  workspaceId,
  runId: runId.nullable(),
  argv: z.array(z.string()),
  cwd: z.string(),
  state: ExecStateSchema,
  driver: ExecDriverNameSchema.nullable(),
  computer: z.string().nullable().default(null),
  exitCode: z.number().int().nullable(),
  limit: ExecLimitNameSchema.nullable(),
  requestedBy: ActorSchema,
  startedAt: instant,
  endedAt: instant.nullable(),
});
export type ExecSummary = z.infer<typeof ExecSummarySchema>;

export const ExecRecordSchema = ExecSummarySchema.extend({ result: ExecResultSchema.nullable() });
export type ExecRecord = z.infer<typeof ExecRecordSchema>;

export const DriverStatusSchema = z.object({
  name: SandboxDriverNameSchema,
  available: z.boolean(),
  /** What is missing, or the version found. */
  detail: z.string(),
  /** Limits this driver cannot enforce here, and why. */
  unenforced: z.array(z.string()),
});

export const SandboxStatusSchema = z.object({
  /** The driver commands run in; null when none is available (every exec then fails closed). */
  driver: SandboxDriverNameSchema.nullable(),
  drivers: z.array(DriverStatusSchema),
  /** The limits applied when a request names none, and the most a request may ask for. */
  defaults: ExecLimitsSchema,
  maximum: ExecLimitsSchema,
  envAllowlist: z.array(z.string()),
  egressOrigins: z.array(z.string()),
  browser: z.object({ available: z.boolean(), detail: z.string() }),
});
export type SandboxStatus = z.infer<typeof SandboxStatusSchema>;

/** Codes of the errors the sandbox's commands answer with (other than validation). */
export const SandboxErrorCodes = {
  /** No driver can run commands here: the message names what to install. */
  unavailable: 'sandbox_unavailable',
  execNotFound: 'exec_not_found',
  /** The request is well-formed but not allowed (cwd outside the workspace, a refused environment name, egress to an origin not allowlisted). */
  refused: 'exec_refused',
  browserUnavailable: 'browser_unavailable',
} as const;

export const BROWSER_ACTIONS = ['navigate', 'read', 'click', 'type', 'screenshot'] as const;

export const BrowserActRequestSchema = z.strictObject({
  workspaceId,
  runId,
  action: z.enum(BROWSER_ACTIONS),
  url: z.url({ protocol: /^https?$/ }).max(4096),
  selector: z.string().min(1).max(1000).optional(),
  text: z.string().max(10_000).optional(),
  /** URL patterns (in grant form) every request of the page must match; the run's browser grants. */
  allowedUrls: z.array(z.string().max(4096)).max(256),
  timeoutMs: z.number().int().min(100).max(300_000).default(30_000),
});
export type BrowserActRequest = z.input<typeof BrowserActRequestSchema>;

export const BlockedRequestSchema = z.object({ url: z.string(), reason: z.string(), resourceType: z.string() });

export const BrowserActResultSchema = z.object({
  ok: z.boolean(),
  /** The page after the action. */
  url: z.string(),
  title: z.string(),
  status: z.number().int().nullable(),
  /** read: the page's visible text (bounded). */
  text: z.string().nullable(),
  /** screenshot: the PNG, stored as a payload `{base64, mediaType}`; its digest is in the event. */
  screenshot: PayloadRefSchema.nullable(),
  screenshotSha256: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
  blocked: z.array(BlockedRequestSchema),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type BrowserActResult = z.infer<typeof BrowserActResultSchema>;

export const SandboxCommands = {
  /** Runs one command to its end and answers how it ended; the caller's timeout must cover the wall time. */
  exec: defineCommand('sandbox.exec', ExecRequestSchema, ExecResultSchema),
  /** Kills the exec's process tree (wherever it runs); `found: false` when no replica is running it. */
  cancel: defineCommand('sandbox.exec.cancel', z.strictObject({ workspaceId, execId: ExecIdSchema, actor: ActorSchema }), z.object({ found: z.boolean() })),
  get: defineCommand('sandbox.exec.get', z.strictObject({ workspaceId, execId: ExecIdSchema }), ExecRecordSchema),
  list: defineCommand(
    'sandbox.exec.list',
    z.strictObject({ workspaceId, runId: runId.optional(), limit: z.number().int().min(1).max(200).default(50) }),
    z.object({ items: z.array(ExecSummarySchema) }),
  ),
  status: defineCommand('sandbox.status', z.strictObject({}), SandboxStatusSchema),
  browserAct: defineCommand('sandbox.browser.act', BrowserActRequestSchema, BrowserActResultSchema),
  /** Closes the run's browser context (the run ended, stopped or moved). */
  browserClose: defineCommand('sandbox.browser.close', z.strictObject({ workspaceId, runId }), z.object({ closed: z.boolean() })),
} as const;

/**
 * Live output of an exec, published on core NATS at `<prefix>.pa.live.sandbox.<ws>.<execKey>`
 * while it runs: ordered by `seq`, lossy by design (the whole output is kept by reference).
 */
export const ExecLiveMessageSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('started'), execId: ExecIdSchema, seq: z.number().int().nonnegative(), argv: z.array(z.string()), driver: ExecDriverNameSchema }),
  z.object({ kind: z.literal('output'), execId: ExecIdSchema, seq: z.number().int().nonnegative(), stream: z.enum(['stdout', 'stderr']), text: z.string() }),
  z.object({ kind: z.literal('ended'), execId: ExecIdSchema, seq: z.number().int().nonnegative(), result: ExecResultSchema }),
]);
export type ExecLiveMessage = z.infer<typeof ExecLiveMessageSchema>;

export function execLiveSubject(prefix: string, workspace: string, execId: string): string {
  const root = prefix ? `${prefix}.pa.live.sandbox` : 'pa.live.sandbox';
  return `${root}.${workspace}.${execKey(execId)}`;
}
