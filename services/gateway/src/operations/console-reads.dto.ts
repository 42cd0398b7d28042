import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';
import { MAX_RUN_FACTS } from '@packetagent/projections';

const instant = z.iso.datetime({ offset: true });

export const WorkspaceDirectorySchema = z.object({
  workers: z.array(z.object({ id: z.string(), name: z.string() })),
  /** A deployment has no name of its own: it reads as its worker's name and pinned version. */
  deployments: z.array(z.object({ id: z.string(), workerId: z.string(), workerName: z.string(), version: z.number().int(), state: z.string() })),
  /** Members of the workspace by their sign-in e-mail. */
  users: z.array(z.object({ id: z.string(), email: z.string(), role: z.string() })),
  /** API keys of the workspace by the name they were given (never their secret or prefix). */
  apiKeys: z.array(z.object({ id: z.string(), name: z.string() })),
});

/** The run ids of a comma-separated list, blanks dropped. */
export function runIdList(text: string): string[] {
  return text.split(',').map((id) => id.trim()).filter(Boolean);
}

export const RunFactsQuery = z.object({
  /** Comma-separated run ids, those of one page of the runs list (at most 200). */
  ids: z
    .string()
    .max(MAX_RUN_FACTS * 201)
    .refine((text) => runIdList(text).length <= MAX_RUN_FACTS, `at most ${MAX_RUN_FACTS} run ids`)
    .refine((text) => runIdList(text).every((id) => id.length <= 200), 'a run id is at most 200 characters'),
});

export const RunFactsSchema = z.object({
  items: z.array(
    z.object({
      runId: z.string(),
      workerId: z.string(),
      workerName: z.string(),
      deploymentId: z.string(),
      version: z.number().int(),
      costUsd: z.number(),
      startedAt: instant.nullable(),
      endedAt: instant.nullable(),
      durationMs: z.number().nonnegative(),
    }),
  ),
});

export const TrendsQuery = z.object({ bucket: z.enum(['hour', 'day']).default('hour') });

export const RunTrendsSchema = z.object({
  bucket: z.enum(['hour', 'day']),
  points: z.array(z.object({ start: instant, started: z.number().int(), succeeded: z.number().int(), failed: z.number().int(), spendUsd: z.number() })),
});

export const SetupStatusSchema = z.object({
  /** True once the owner and the first workspace exist: the setup form no longer applies. */
  complete: z.boolean(),
});

export class WorkspaceDirectoryDto extends createZodDto(WorkspaceDirectorySchema) {}
export class RunFactsQueryDto extends createZodDto(RunFactsQuery) {}
export class RunFactsDto extends createZodDto(RunFactsSchema) {}
export class TrendsQueryDto extends createZodDto(TrendsQuery) {}
export class RunTrendsDto extends createZodDto(RunTrendsSchema) {}
export class SetupStatusDto extends createZodDto(SetupStatusSchema) {}
