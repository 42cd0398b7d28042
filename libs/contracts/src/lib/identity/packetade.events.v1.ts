import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { Identifiers } from '../envelope';
import { ActorNameSchema, ActorOperationSchema } from '../packetade/actor-operations';
import { FINGERPRINT_PATTERN } from '../packetade/dsse';

/**
 * Audit events of the PacketADE door. Issuing, revoking, trusting and acknowledging go on the
 * workspace's stream with the other identity events; every call an actor token makes is a
 * stream of its own (`adecall-<id>`), so concurrent calls never contend for one stream's next
 * version. None carries a secret or a hash of one.
 */
const workspaceId = z.string().regex(Identifiers.workspace);
const tokenId = z.string().regex(/^[a-f0-9]{20}$/);
const fingerprint = z.string().regex(FINGERPRINT_PATTERN);
const sha256 = z.string().regex(/^[a-f0-9]{64}$/);

export const ActorTokenIssuedV1 = z.object({
  workspaceId,
  tokenId,
  actorName: ActorNameSchema,
  operations: z.array(ActorOperationSchema).min(1),
  expiresAt: z.iso.datetime(),
});
export const ActorTokenRevokedV1 = z.object({ workspaceId, tokenId, actorName: ActorNameSchema });
export const PublisherTrustedV1 = z.object({ workspaceId, fingerprint, name: z.string().min(1).max(200) });
export const PublisherRemovedV1 = z.object({ workspaceId, fingerprint });
export const PackageAcknowledgedV1 = z.object({ workspaceId, packageDigest: sha256, keyId: fingerprint, note: z.string().max(2000).nullable() });
export const ActorCallRecordedV1 = z.object({
  workspaceId,
  tokenId,
  actorName: ActorNameSchema,
  operation: ActorOperationSchema,
  transport: z.enum(['rest', 'grpc']),
  /** `ok`, or the problem code the call was refused with. */
  outcome: z.string().min(1).max(100),
  deploymentId: z.string().max(100).nullable(),
  runId: z.string().max(100).nullable(),
  packageDigest: sha256.nullable(),
});

export const PacketAdeEventTypes = {
  actorTokenIssued: 'packetade.actor_token_issued',
  actorTokenRevoked: 'packetade.actor_token_revoked',
  publisherTrusted: 'packetade.publisher_trusted',
  publisherRemoved: 'packetade.publisher_removed',
  packageAcknowledged: 'packetade.package_acknowledged',
  actorCallRecorded: 'packetade.actor_call_recorded',
} as const;

export type ActorCallRecorded = z.infer<typeof ActorCallRecordedV1>;

/** The stream of one call made with an actor token; `callId` is unique (a UUIDv7, so call streams sort by time). */
export function actorCallStream(callId: string): string {
  return `adecall-${callId}`;
}

export function registerPacketAdeEvents(registry: EventRegistry): EventRegistry {
  return registry
    .register(PacketAdeEventTypes.actorTokenIssued, 1, ActorTokenIssuedV1)
    .register(PacketAdeEventTypes.actorTokenRevoked, 1, ActorTokenRevokedV1)
    .register(PacketAdeEventTypes.publisherTrusted, 1, PublisherTrustedV1)
    .register(PacketAdeEventTypes.publisherRemoved, 1, PublisherRemovedV1)
    .register(PacketAdeEventTypes.packageAcknowledged, 1, PackageAcknowledgedV1)
    .register(PacketAdeEventTypes.actorCallRecorded, 1, ActorCallRecordedV1);
}
