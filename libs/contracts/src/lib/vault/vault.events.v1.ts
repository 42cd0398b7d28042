import { z } from 'zod';
import type { EventRegistry } from '../registry';

/** Credential names as workers' definitions and credential grants spell them. */
export const CredentialNameSchema = z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'lower-case letters, digits and _, starting with a letter (1-63)');

/** `mk-` and 16 hex digits, derived from the key itself so configuration needs no separate id. */
export const MasterKeyIdSchema = z.string().regex(/^mk-[0-9a-f]{16}$/);

export const CREDENTIAL_STREAM_CATEGORY = 'credential';
export const VAULT_STREAM_CATEGORY = 'vault';

/**
 * `credential-<workspace>-<name>`: a name never holds a dash, so the last dash separates the two
 * even when the workspace id has dashes of its own.
 */
export function credentialStream(workspaceId: string, name: string): string {
  return `${CREDENTIAL_STREAM_CATEGORY}-${workspaceId}-${name}`;
}

/** Where a workspace's key-management events (rotations) go. */
export function vaultStream(workspaceId: string): string {
  return `${VAULT_STREAM_CATEGORY}-${workspaceId}`;
}

/**
 * Metadata only: an event never carries the value, its ciphertext or a wrapped key, since
 * events are replicated, relayed and kept forever.
 */
export const CredentialStoredV1 = z.strictObject({
  name: CredentialNameSchema,
  version: z.number().int().positive(),
  keyId: MasterKeyIdSchema,
  /** `oauth`: an OAuth connection, stored when an operator connected it (`connected`) or by the vault's refresh (`refreshed`). */
  kind: z.enum(['secret', 'oauth']).optional(),
  oauth: z.enum(['connected', 'refreshed']).optional(),
});
export const CredentialDeletedV1 = z.strictObject({ name: CredentialNameSchema, version: z.number().int().positive() });
/** A grant was redeemed: who read which version, for which run and tool. */
export const CredentialResolvedV1 = z.strictObject({
  name: CredentialNameSchema,
  version: z.number().int().positive(),
  grantId: z.string().min(1).max(100),
  runId: z.string().min(1).max(200),
  tool: z.string().min(1).max(100),
});
export const VaultRotatedV1 = z.strictObject({ fromKeyId: MasterKeyIdSchema, toKeyId: MasterKeyIdSchema, count: z.number().int().nonnegative() });

export const VaultEvents = {
  'credential.stored': CredentialStoredV1,
  'credential.deleted': CredentialDeletedV1,
  'credential.resolved': CredentialResolvedV1,
  'vault.rotated': VaultRotatedV1,
} as const;

export type VaultEventType = keyof typeof VaultEvents;
export type VaultEventData<T extends VaultEventType> = z.infer<(typeof VaultEvents)[T]>;

export function registerVaultEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(VaultEvents);
}
