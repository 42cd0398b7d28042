import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { FINGERPRINT_PATTERN } from '@packetagent/contracts';
import { storableText } from '../storable-text';

export const TrustPublisherCommand = z.strictObject({
  name: storableText(200).trim().min(1, 'must not be empty').describe('who holds the key, for people reading the list'),
  publicKey: storableText(4096).min(1).describe('an Ed25519 public key: PEM, or base64 SPKI DER'),
});
export type TrustPublisherCommand = z.output<typeof TrustPublisherCommand>;
export class TrustPublisherDto extends createZodDto(TrustPublisherCommand) {}

export const Publisher = z.object({ fingerprint: z.string(), name: z.string(), createdAt: z.iso.datetime() });
export class PublisherDto extends createZodDto(Publisher) {}
export const PublisherList = z.object({ items: z.array(Publisher) });
export type PublisherList = z.output<typeof PublisherList>;
export class PublisherListDto extends createZodDto(PublisherList) {}

export const AcknowledgePackageCommand = z.strictObject({
  packageDigest: z.string().regex(/^[a-f0-9]{64}$/, 'the package digest (64 hex digits) that validate reported'),
  keyId: z.string().regex(FINGERPRINT_PATTERN, 'the fingerprint of the untrusted signing key, SHA256:<hex>'),
  note: storableText(2000).optional().describe('why this package is accepted'),
});
export type AcknowledgePackageCommand = z.output<typeof AcknowledgePackageCommand>;
export class AcknowledgePackageDto extends createZodDto(AcknowledgePackageCommand) {}
