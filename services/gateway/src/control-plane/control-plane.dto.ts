import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { RUN_STATES } from '@packetagent/contracts';

export const CreateWorkerBody = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]{1,62}$/, 'lower-case letters, digits and dashes, starting with a letter, 2 to 63 characters'),
  description: z.string().max(2000).default(''),
});
export class CreateWorkerDto extends createZodDto(CreateWorkerBody) {}

export const CreateDeploymentBody = z.strictObject({
  workerId: z.string().min(1).max(200),
  version: z.number().int().positive().optional(),
  overrides: z.record(z.string(), z.unknown()).default({}),
  /** Or the Idempotency-Key header: the same key again answers the deployment it created (200), never a second one. */
  idempotencyKey: z.string().min(1).max(200).optional(),
  /** Deploy even though the version lacks credentials, providers, tools or computers here (its runs will fail until they exist). */
  acceptMissing: z.boolean().default(false),
});
export class CreateDeploymentDto extends createZodDto(CreateDeploymentBody) {}

export const DeploymentActionBody = z.strictObject({ reason: z.string().max(500).optional() });
export class DeploymentActionDto extends createZodDto(DeploymentActionBody) {}

export const RollbackBody = z.strictObject({ version: z.number().int().positive(), reason: z.string().max(500).optional() });
export class RollbackDto extends createZodDto(RollbackBody) {}

export const UpdateDeploymentBody = z.strictObject({ version: z.number().int().positive(), reason: z.string().max(500).optional() });
export class UpdateDeploymentDto extends createZodDto(UpdateDeploymentBody) {}

export const ManualRunBody = z.strictObject({
  input: z.json().optional(),
  idempotencyKey: z.string().min(1).max(200).optional(),
});
export class ManualRunDto extends createZodDto(ManualRunBody) {}

export const StopRunBody = z.strictObject({ reason: z.string().max(500).optional() });
export class StopRunDto extends createZodDto(StopRunBody) {}

export const PageQuery = z.object({
  cursor: z.string().max(300).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const RunsQuery = PageQuery.extend({
  deploymentId: z.string().max(200).optional(),
  state: z.enum(RUN_STATES).optional(),
});

export const DeploymentsQuery = PageQuery.extend({ workerId: z.string().max(200).optional() });
export class PageQueryDto extends createZodDto(PageQuery) {}
export class RunsQueryDto extends createZodDto(RunsQuery) {}
export class DeploymentsQueryDto extends createZodDto(DeploymentsQuery) {}
