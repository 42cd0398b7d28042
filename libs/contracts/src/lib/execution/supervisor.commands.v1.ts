import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import type { EventRegistry } from '../registry';

/**
 * What the supervisor answers about the runs it holds, and what a person may do with a
 * quarantined run (one whose events cannot be replayed): release it to be replayed again, or
 * end it. Served by every supervisor replica; see docs/adr/0020-stuck-run-watchdog.md.
 */

const workspaceId = z.string().regex(Identifiers.workspace);
const runId = z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/);
const instant = z.iso.datetime({ offset: true });

/** Codes of the errors the supervisor's commands answer with (other than validation). */
export const SupervisorErrorCodes = {
  /** No such run in the workspace: another workspace's run answers the same. */
  runNotFound: 'run_not_found',
  /** Release and end apply to a quarantined run only. */
  runNotQuarantined: 'run_not_quarantined',
} as const;

/**
 * Where the supervisor has a run: `unclaimed` until a replica first claims it, then the status
 * of its lease row (`active` while someone should be driving it, `waiting` while parked,
 * `terminal`, or `quarantined`).
 */
export const SUPERVISION_STATUSES = ['unclaimed', 'active', 'waiting', 'terminal', 'quarantined'] as const;
export const SupervisionStatusSchema = z.enum(SUPERVISION_STATUSES);
export type SupervisionStatus = z.infer<typeof SupervisionStatusSchema>;

export const RunSupervisionSchema = z.object({
  runId,
  status: SupervisionStatusSchema,
  /** Why the run's events could not be replayed, while it is quarantined (kept after it is ended). */
  quarantineReason: z.string().nullable(),
  /** The attention record a waiting run waits on. */
  waitingOn: z.string().nullable(),
  /** Times a replica claimed the run. */
  claims: z.number().int().nonnegative(),
  /** When the lease row last changed; null while unclaimed. */
  updatedAt: instant.nullable(),
});
export type RunSupervision = z.infer<typeof RunSupervisionSchema>;

/**
 * What became of a release, as far as it could be seen before the answer: `resumed` (a replica
 * claimed the run and its history replayed), `quarantined` (the history still cannot be
 * replayed; the reason is new or the same), or `pending` (no replica had claimed it yet; the
 * recovery sweep will).
 */
export const RELEASE_OUTCOMES = ['resumed', 'quarantined', 'pending'] as const;
export const ReleaseRunResultSchema = RunSupervisionSchema.extend({ outcome: z.enum(RELEASE_OUTCOMES) });
export type ReleaseRunResult = z.infer<typeof ReleaseRunResultSchema>;

export const EndRunResultSchema = RunSupervisionSchema.extend({
  /** Stream version of the `run.abandoned` event that ended the run. */
  endedAtVersion: z.number().int().positive(),
});
export type EndRunResult = z.infer<typeof EndRunResultSchema>;

const runRef = z.object({ workspaceId, runId });

export const SupervisorCommands = {
  getRun: defineCommand('supervisor.runs.get', runRef, RunSupervisionSchema),
  /** Clears the quarantine and drives the run again; a history that still cannot be replayed is quarantined again with the reason. */
  releaseRun: defineCommand('supervisor.runs.release', runRef.extend({ actor: ActorSchema }), ReleaseRunResultSchema),
  /** Ends a quarantined run: `run.abandoned` (cause `quarantined`) at the stream's head, without folding its history. */
  endRun: defineCommand('supervisor.runs.end', runRef.extend({ actor: ActorSchema, reason: z.string().trim().min(1).max(1000) }), EndRunResultSchema),
} as const;

/**
 * Stream `runcare-<runId>`: what people did about a run the supervisor could not carry on by
 * itself. It is not the run's stream, so a release leaves the history it will replay untouched.
 */
export const runCareStream = (id: string): string => `runcare-${id}`;

export const QuarantineReleasedV1 = z.object({
  runId: z.string().min(1).max(200),
  /** The reason the run was quarantined with. */
  quarantineReason: z.string().max(1000).nullable(),
});
export const QuarantineEndedV1 = z.object({
  runId: z.string().min(1).max(200),
  /** The person's reason. */
  reason: z.string().max(1000),
  quarantineReason: z.string().max(1000).nullable(),
  /** Stream version of the `run.abandoned` event appended to the run's stream. */
  abandonedAtVersion: z.number().int().positive(),
});

export const RunCareEvents = {
  'quarantine.released': QuarantineReleasedV1,
  'quarantine.ended': QuarantineEndedV1,
} as const;

export type RunCareEventType = keyof typeof RunCareEvents;
export type RunCareEventData<T extends RunCareEventType> = z.infer<(typeof RunCareEvents)[T]>;

export function registerRunCareEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(RunCareEvents);
}
