import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { storableText } from '../storable-text';

export const DoorRunBody = z.strictObject({
  input: z.json().optional(),
  /** Or the Idempotency-Key header: the same key again answers the same run (200). */
  idempotencyKey: storableText(200).min(1).optional(),
});
export class DoorRunDto extends createZodDto(DoorRunBody) {}

export const DoorActionBody = z.strictObject({ reason: storableText(500).optional() });
export class DoorActionDto extends createZodDto(DoorActionBody) {}

export const DoorRollbackBody = z.strictObject({ version: z.number().int().positive(), reason: storableText(500).optional() });
export class DoorRollbackDto extends createZodDto(DoorRollbackBody) {}

export const DoorRunsQuery = z.object({
  cursor: storableText(300).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export class DoorRunsQueryDto extends createZodDto(DoorRunsQuery) {}

const Signature = z.object({ keyId: z.string(), trusted: z.boolean(), acknowledged: z.boolean() });
const Requirements = z.object({ providers: z.array(z.string()), tools: z.array(z.string()), credentials: z.array(z.string()) });

export const ValidationReport = z.object({
  packageDigest: z.string().describe('SHA-256 of the package\'s RFC 8785 bytes'),
  workerName: z.string(),
  signed: z.boolean(),
  signatures: z.array(Signature),
  accepted: z.boolean().describe('whether this workspace accepts the package\'s signer'),
  refusal: z.object({ code: z.string(), detail: z.string() }).nullable(),
  requires: Requirements,
  preflight: z.object({
    ready: z.boolean().describe('nothing is missing'),
    missing: z.array(z.object({ kind: z.enum(['credential', 'provider', 'tool', 'computer']), name: z.string(), reason: z.string() })),
  }),
});
export class ValidationReportDto extends createZodDto(ValidationReport) {}

export const DeployReceipt = z.object({
  packageDigest: z.string(),
  workerId: z.string(),
  workerName: z.string(),
  version: z.number().int().positive(),
  versionDigest: z.string().describe('the digest of the worker version the deployment runs'),
  deploymentId: z.string(),
  created: z.boolean(),
  signedBy: z.array(z.string()).describe('the accepted signing keys'),
  webhooks: z.array(z.object({ triggerId: z.string(), secret: z.string() })).describe('secrets of a new deployment\'s webhook triggers, in this answer only'),
});
export class DeployReceiptDto extends createZodDto(DeployReceipt) {}
