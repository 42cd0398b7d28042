import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { ComputerKindSchema, ComputerNameSchema, HostKeyFingerprintSchema } from './computer.v1';
import { ExecDriverNameSchema, ExecIdSchema, ExecLimitNameSchema, ExecLimitsSchema, ExecStateSchema, execKey } from './sandbox.commands.v1';

/**
 * A person's (or API key's) command in the sandbox, recorded as events: what was run, where, by
 * whom, and how it ended. A run's commands are recorded in the run's own stream (the tool call,
 * its effect receipt and result), so only commands someone else asked for get these.
 */
export const SANDBOX_EXEC_STREAM_CATEGORY = 'opexec';

/** `opexec-<workspace>-<execKey>`: one stream per operator exec, written by the sandbox replica running it. */
export function operatorExecStream(workspaceId: string, execId: string): string {
  return `${SANDBOX_EXEC_STREAM_CATEGORY}-${workspaceId}-${execKey(execId)}`;
}

const digest = z.string().regex(/^[0-9a-f]{64}$/);

export const SandboxExecStartedV1 = z.strictObject({
  execId: ExecIdSchema,
  /** The run whose workspace it works in, when one was named. */
  runId: z.string().nullable(),
  argv: z.array(z.string()),
  cwd: z.string(),
  /** Names only: values stay out of the record. */
  envNames: z.array(z.string()),
  limits: ExecLimitsSchema,
  driver: ExecDriverNameSchema,
  egress: z.array(z.string()),
});

export const SandboxExecEndedV1 = z.strictObject({
  execId: ExecIdSchema,
  state: ExecStateSchema.exclude(['running']),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  limit: ExecLimitNameSchema.nullable(),
  durationMs: z.number().int().nonnegative(),
  /** The kept output of each stream by size and digest; the bytes are retrievable through the exec. */
  stdout: z.strictObject({ bytes: z.number().int().nonnegative(), digest }),
  stderr: z.strictObject({ bytes: z.number().int().nonnegative(), digest }),
});

export const COMPUTER_STREAM_CATEGORY = 'computer';

/** `computer-<workspace>-<name>`: a computer's registration history, written by the sandbox replica serving the change. */
export function computerStream(workspaceId: string, name: string): string {
  return `${COMPUTER_STREAM_CATEGORY}-${workspaceId}-${name}`;
}

/** A registration or a replacement: the whole record as it now stands (the key only by its credential name). */
export const ComputerRegisteredV1 = z.strictObject({
  name: ComputerNameSchema,
  kind: ComputerKindSchema,
  description: z.string(),
  ssh: z.strictObject({ host: z.string(), port: z.number().int(), user: z.string(), hostKeys: z.array(HostKeyFingerprintSchema), keyCredential: z.string() }).nullable(),
  roots: z.array(z.string()),
  policy: z.strictObject({ network: z.string(), write: z.string(), shell: z.string(), secrets: z.string(), approval: z.string() }),
  /** The host key pinned because the operator confirmed the one presented, when that is how it was pinned. */
  acceptedHostKey: HostKeyFingerprintSchema.nullable(),
});

export const ComputerRemovedV1 = z.strictObject({ name: ComputerNameSchema });

/** The computer presented a key that is not pinned: the connection was refused before anything was sent. */
export const ComputerHostKeyRefusedV1 = z.strictObject({
  name: ComputerNameSchema,
  host: z.string(),
  port: z.number().int(),
  presented: HostKeyFingerprintSchema,
  pinned: z.array(HostKeyFingerprintSchema),
  /** What was connecting: a probe, or a command (by exec id). */
  purpose: z.enum(['probe', 'exec']),
});

export const SandboxEvents = {
  'sandbox.exec_started': SandboxExecStartedV1,
  'sandbox.exec_ended': SandboxExecEndedV1,
  'computer.registered': ComputerRegisteredV1,
  'computer.updated': ComputerRegisteredV1,
  'computer.removed': ComputerRemovedV1,
  'computer.host_key_refused': ComputerHostKeyRefusedV1,
} as const;

export type SandboxEventType = keyof typeof SandboxEvents;
export type SandboxEventData<T extends SandboxEventType> = z.infer<(typeof SandboxEvents)[T]>;

export function registerSandboxEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(SandboxEvents);
}
