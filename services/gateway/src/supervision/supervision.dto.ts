import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { EndRunResultSchema, ReleaseRunResultSchema, RunSupervisionSchema } from '@packetagent/contracts';

export class RunSupervisionDto extends createZodDto(RunSupervisionSchema) {}
export class ReleaseRunResultDto extends createZodDto(ReleaseRunResultSchema) {}
export class EndRunResultDto extends createZodDto(EndRunResultSchema) {}

export const EndRunBody = z.strictObject({ reason: z.string().trim().min(1).max(1000).describe('why the run is ended; recorded with the person who ended it') });
export class EndRunDto extends createZodDto(EndRunBody) {}
