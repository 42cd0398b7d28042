import { createZodDto } from 'nestjs-zod';
import { OverviewSchema, RunSummarySchema } from '@packetagent/contracts';

export class OverviewDto extends createZodDto(OverviewSchema) {}
export class RunSummaryDto extends createZodDto(RunSummarySchema) {}
