import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { ExecIdSchema, ExecLimitNameSchema, ExecLimitsSchema, ExecStateSchema, SandboxDriverNameSchema, execKey } from './sandbox.commands.v1';

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
  driver: SandboxDriverNameSchema,
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

export const SandboxEvents = {
  'sandbox.exec_started': SandboxExecStartedV1,
  'sandbox.exec_ended': SandboxExecEndedV1,
} as const;

export type SandboxEventType = keyof typeof SandboxEvents;
export type SandboxEventData<T extends SandboxEventType> = z.infer<(typeof SandboxEvents)[T]>;

export function registerSandboxEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(SandboxEvents);
}
