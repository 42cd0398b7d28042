import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { Identifiers } from '../envelope';
import { RoleSchema } from './roles';
import { registerPacketAdeEvents } from './packetade.events.v1';

/**
 * Audit events of the identity context, appended on stream `workspace-<id>` in the same
 * transaction as the change they record. They never carry a secret, a hash of one, or an
 * e-mail address (events are immutable; personal data stays in tables that can be erased).
 */
const workspaceId = z.string().regex(Identifiers.workspace);
const userId = z.uuid();

export const WorkspaceCreatedV1 = z.object({ workspaceId, name: z.string().min(1).max(200), createdBy: userId });
export const MemberAddedV1 = z.object({ workspaceId, userId, role: RoleSchema });
export const ApiKeyCreatedV1 = z.object({
  workspaceId,
  apiKeyId: z.string().min(1).max(64),
  name: z.string().min(1).max(200),
  role: RoleSchema,
  expiresAt: z.iso.datetime().nullable(),
});
export const ApiKeyRevokedV1 = z.object({ workspaceId, apiKeyId: z.string().min(1).max(64) });
export const UserTotpEnabledV1 = z.object({ userId });
const passkeyId = z.uuid();
export const UserPasskeyAddedV1 = z.object({ userId, passkeyId });
export const UserPasskeyRemovedV1 = z.object({ userId, passkeyId });
/** A sign-in refused because the authenticator's signature counter did not move forward: a possible copy of the credential. */
export const UserPasskeyCounterRegressedV1 = z.object({ userId, passkeyId, storedCounter: z.number().int().min(0), presentedCounter: z.number().int().min(0) });
export const SetupCompletedV1 = z.object({ workspaceId, ownerUserId: userId });

export const IdentityEventTypes = {
  workspaceCreated: 'workspace.created',
  memberAdded: 'member.added',
  apiKeyCreated: 'api_key.created',
  apiKeyRevoked: 'api_key.revoked',
  userTotpEnabled: 'user.totp_enabled',
  userPasskeyAdded: 'user.passkey_added',
  userPasskeyRemoved: 'user.passkey_removed',
  userPasskeyCounterRegressed: 'user.passkey_counter_regressed',
  setupCompleted: 'setup.completed',
} as const;

export type WorkspaceCreated = z.infer<typeof WorkspaceCreatedV1>;
export type MemberAdded = z.infer<typeof MemberAddedV1>;
export type ApiKeyCreated = z.infer<typeof ApiKeyCreatedV1>;
export type ApiKeyRevoked = z.infer<typeof ApiKeyRevokedV1>;
export type UserTotpEnabled = z.infer<typeof UserTotpEnabledV1>;
export type SetupCompleted = z.infer<typeof SetupCompletedV1>;

/** The stream every identity audit event of a workspace is appended to. */
export function workspaceStream(workspaceId: string): string {
  return `workspace-${workspaceId}`;
}

export function registerIdentityEvents(registry: EventRegistry): EventRegistry {
  return registerPacketAdeEvents(registry)
    .register(IdentityEventTypes.workspaceCreated, 1, WorkspaceCreatedV1)
    .register(IdentityEventTypes.memberAdded, 1, MemberAddedV1)
    .register(IdentityEventTypes.apiKeyCreated, 1, ApiKeyCreatedV1)
    .register(IdentityEventTypes.apiKeyRevoked, 1, ApiKeyRevokedV1)
    .register(IdentityEventTypes.userTotpEnabled, 1, UserTotpEnabledV1)
    .register(IdentityEventTypes.userPasskeyAdded, 1, UserPasskeyAddedV1)
    .register(IdentityEventTypes.userPasskeyRemoved, 1, UserPasskeyRemovedV1)
    .register(IdentityEventTypes.userPasskeyCounterRegressed, 1, UserPasskeyCounterRegressedV1)
    .register(IdentityEventTypes.setupCompleted, 1, SetupCompletedV1);
}
