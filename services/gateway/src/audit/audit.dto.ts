import { createZodDto } from 'nestjs-zod';
import { AuditReportSchema, EvidenceBundleSchema } from '@packetagent/contracts';

export class AuditReportDto extends createZodDto(AuditReportSchema) {}
export class EvidenceBundleDto extends createZodDto(EvidenceBundleSchema) {}
