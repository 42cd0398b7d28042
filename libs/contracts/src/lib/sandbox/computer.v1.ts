import { z } from 'zod';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { Identifiers } from '../envelope';
import { CredentialNameSchema } from '../vault/vault.events.v1';

/**
 * Computers: machines a worker's commands run on (ADR 0022). A versioned record owned by the
 * sandbox service; status comes from its probes, never from what someone typed.
 */

/** The record layout this build writes and reads; a higher one is refused, never rewritten. */
export const COMPUTER_RECORD_VERSION = 1;

export const ComputerNameSchema = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'lower-case letters, digits and -, starting with a letter (at most 63)');

export const COMPUTER_KINDS = ['local', 'ssh'] as const;
export const ComputerKindSchema = z.enum(COMPUTER_KINDS);
export type ComputerKind = z.infer<typeof ComputerKindSchema>;

/** `SHA256:` and the unpadded base64 of the SHA-256 of the host key blob, as `ssh-keygen -l` prints it. */
export const HostKeyFingerprintSchema = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'expected SHA256:<43 base64 characters>, as ssh-keygen -lf prints it');

export const ACCESS_LEVELS = ['ask', 'allow', 'deny'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];
export const APPROVAL_MODES = ['explicit', 'trust-workspace', 'trust-computer'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/**
 * What a computer lets commands do without asking. Every field is a string enum whose absent or
 * unknown value reads as the conservative one (`ask`, secrets `deny`, approval `explicit`): a
 * record that was never configured never trusts more than one that was.
 */
export interface ComputerPolicy {
  network: AccessLevel;
  write: AccessLevel;
  shell: AccessLevel;
  secrets: 'allow' | 'deny';
  approval: ApprovalMode;
}

export const CONSERVATIVE_COMPUTER_POLICY: Readonly<ComputerPolicy> = Object.freeze({ network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit' });

function pick<T extends string>(values: readonly T[], value: unknown, fallback: T): T {
  return typeof value === 'string' && (values as readonly string[]).includes(value) ? (value as T) : fallback;
}

/** Any policy object (stored, sent or absent) with each missing or unknown value read as the conservative one. */
export function readComputerPolicy(raw: unknown): ComputerPolicy {
  const given = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  return {
    network: pick(ACCESS_LEVELS, given['network'], CONSERVATIVE_COMPUTER_POLICY.network),
    write: pick(ACCESS_LEVELS, given['write'], CONSERVATIVE_COMPUTER_POLICY.write),
    shell: pick(ACCESS_LEVELS, given['shell'], CONSERVATIVE_COMPUTER_POLICY.shell),
    secrets: pick(['allow', 'deny'] as const, given['secrets'], CONSERVATIVE_COMPUTER_POLICY.secrets),
    approval: pick(APPROVAL_MODES, given['approval'], CONSERVATIVE_COMPUTER_POLICY.approval),
  };
}

export const ComputerPolicySchema = z.unknown().optional().transform(readComputerPolicy);

/** Strict form for what a client sends: a typo is an error there, not a silent default. */
export const ComputerPolicyInputSchema = z.strictObject({
  network: z.enum(ACCESS_LEVELS).optional(),
  write: z.enum(ACCESS_LEVELS).optional(),
  shell: z.enum(ACCESS_LEVELS).optional(),
  secrets: z.enum(['allow', 'deny']).optional(),
  approval: z.enum(APPROVAL_MODES).optional(),
});

/** An absolute, normalised POSIX directory on the computer: no `.`/`..` segments, no NUL, no trailing slash. */
export const ComputerRootSchema = z
  .string()
  .min(1)
  .max(1024)
  .refine((root) => root.startsWith('/') && !root.includes('\0') && !/(^|\/)\.\.?(\/|$)/.test(root) && !/\/\/|\/$/.test(root.length > 1 ? root : ''), 'an absolute directory without . or .. segments, doubled or trailing slashes');

export const SshTargetSchema = z.strictObject({
  host: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9.:_-]+$/, 'a host name or an IP address'),
  port: z.number().int().min(1).max(65_535).default(22),
  user: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z_][a-z0-9_.-]*$/i, 'a POSIX user name'),
  /** Host key fingerprints this computer may present; a connection presenting any other is refused. */
  hostKeys: z.array(HostKeyFingerprintSchema).max(8).default([]),
  /** The vault credential holding the private key (OpenSSH or PEM); read through a single-use grant. */
  keyCredential: CredentialNameSchema,
});
export type SshTarget = z.output<typeof SshTargetSchema>;

const workspaceId = z.string().regex(Identifiers.workspace);
const instant = z.iso.datetime({ offset: true });

/** What an operator registers; the policy is filled in conservatively. */
export const ComputerSpecSchema = z
  .strictObject({
    kind: ComputerKindSchema,
    description: z.string().max(500).default(''),
    ssh: SshTargetSchema.optional(),
    /** Directories commands may work in (their real paths, symlinks resolved, must stay inside one). */
    roots: z.array(ComputerRootSchema).max(32).default([]),
    policy: ComputerPolicyInputSchema.default({}),
  })
  .superRefine((spec, ctx) => {
    if (spec.kind === 'ssh' && !spec.ssh) ctx.addIssue({ code: 'custom', path: ['ssh'], message: 'an ssh computer needs its host, user and key credential' });
    if (spec.kind === 'ssh' && spec.roots.length === 0) ctx.addIssue({ code: 'custom', path: ['roots'], message: 'an ssh computer needs at least one root commands may work in' });
    if (spec.kind === 'local' && spec.ssh) ctx.addIssue({ code: 'custom', path: ['ssh'], message: 'a local computer takes no ssh target' });
    if (spec.kind === 'local' && spec.roots.length > 0) ctx.addIssue({ code: 'custom', path: ['roots'], message: "a local computer's commands work in the run workspace: it takes no roots" });
  });
export type ComputerSpec = z.input<typeof ComputerSpecSchema>;
export type ParsedComputerSpec = z.output<typeof ComputerSpecSchema>;

export const CapabilitiesSchema = z.object({
  os: z.string(),
  arch: z.string(),
  cpus: z.number().int().nonnegative(),
  /** Programs found on the computer's PATH among those the probe looks for. */
  tools: z.array(z.string()),
});
export type Capabilities = z.infer<typeof CapabilitiesSchema>;

/** The stored record, exactly as it is kept: `recordVersion` first so a newer layout is recognised before anything else is read. */
export const ComputerRecordSchema = z.object({
  recordVersion: z.literal(COMPUTER_RECORD_VERSION),
  name: ComputerNameSchema,
  kind: ComputerKindSchema,
  description: z.string(),
  ssh: SshTargetSchema.extend({ port: z.number().int(), hostKeys: z.array(HostKeyFingerprintSchema) }).nullable(),
  roots: z.array(z.string()),
  policy: ComputerPolicySchema,
  /** From the last successful probe; null until one succeeded. */
  capabilities: CapabilitiesSchema.nullable(),
  createdBy: ActorSchema,
  createdAt: instant,
  updatedAt: instant,
});
export type ComputerRecord = z.infer<typeof ComputerRecordSchema>;

export const COMPUTER_STATES = ['online', 'offline', 'unknown'] as const;
export type ComputerState = (typeof COMPUTER_STATES)[number];

/**
 * Status as the answering replica observed it: `online` only within the staleness window since a
 * successful probe it received, `offline` only after a probe failed affirmatively (refused,
 * rejected, a changed host key), `unknown` otherwise. `observedAt` says when, on the wall clock.
 */
export const ComputerStatusSchema = z.object({
  state: z.enum(COMPUTER_STATES),
  /** When the last successful probe was made; null when none was seen. */
  observedAt: instant.nullable(),
  /** How long ago, by the answering replica's monotonic clock, the last probe result arrived; null when none. */
  ageMs: z.number().int().nonnegative().nullable(),
  staleAfterMs: z.number().int().positive(),
  /** What the last probe found (the failure, in words, or the OS found). */
  detail: z.string(),
  /** `changed`: the computer presented a key that is not pinned; connections are refused until the record is updated. */
  hostKey: z.object({ state: z.enum(['pinned', 'changed', 'not_applicable']), presented: HostKeyFingerprintSchema.nullable(), at: instant.nullable() }),
});
export type ComputerStatus = z.infer<typeof ComputerStatusSchema>;

export const ComputerViewSchema = z.object({
  workspaceId,
  name: ComputerNameSchema,
  kind: ComputerKindSchema,
  description: z.string(),
  ssh: z.object({ host: z.string(), port: z.number().int(), user: z.string(), hostKeys: z.array(z.string()), keyCredential: z.string() }).nullable(),
  roots: z.array(z.string()),
  policy: z.object({ network: z.enum(ACCESS_LEVELS), write: z.enum(ACCESS_LEVELS), shell: z.enum(ACCESS_LEVELS), secrets: z.enum(['allow', 'deny']), approval: z.enum(APPROVAL_MODES) }),
  capabilities: CapabilitiesSchema.nullable(),
  /** Stream version of the record: send it back as `expectedVersion` to update without overwriting someone else's change. */
  version: z.number().int().positive(),
  createdBy: ActorSchema,
  createdAt: instant,
  updatedAt: instant,
  status: ComputerStatusSchema,
});
export type ComputerView = z.infer<typeof ComputerViewSchema>;

/**
 * What a command on a computer asks of it: every command may write and reach the network (nothing
 * confines it there), so all three axes count; the strictest wins.
 */
export function commandRequirement(policy: ComputerPolicy): AccessLevel {
  const levels = [policy.shell, policy.write, policy.network];
  if (levels.includes('deny')) return 'deny';
  if (levels.includes('ask')) return policy.approval === 'trust-computer' ? 'allow' : 'ask';
  return 'allow';
}
