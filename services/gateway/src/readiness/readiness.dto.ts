import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';

export const Readiness = z
  .object({
    ready: z.boolean().describe('nothing is missing: a run would find everything the definition needs'),
    missing: z.array(
      z.object({
        kind: z.enum(['credential', 'provider', 'tool', 'computer']),
        name: z.string(),
        reason: z.string().describe('why it is missing and, where it can be told, what to do'),
      }),
    ),
  })
  .describe('What the definition needs that the workspace or this server lacks now');
export class ReadinessDto extends createZodDto(Readiness) {}

export const DefinitionReadiness = z.object({
  name: z.string().describe('the worker name the definition carries'),
  readiness: Readiness,
});
export class DefinitionReadinessDto extends createZodDto(DefinitionReadiness) {}
