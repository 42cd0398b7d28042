import { z } from 'zod';
import { defineCommand } from '../commands';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { Identifiers } from '../envelope';
import { SealedCredentialSchema } from './sealed-credential';
import { CredentialNameSchema, MasterKeyIdSchema } from './vault.events.v1';

const workspaceId = z.string().regex(Identifiers.workspace);

/** Largest credential value, in UTF-8 bytes. */
export const MAX_CREDENTIAL_VALUE_BYTES = 64 * 1024;

export const CredentialValueSchema = z
  .string()
  .min(1, 'must not be empty')
  .refine((value) => Buffer.byteLength(value, 'utf8') <= MAX_CREDENTIAL_VALUE_BYTES, `at most ${MAX_CREDENTIAL_VALUE_BYTES} bytes`);

/** What anyone but a grant holder may learn about a credential: never its value. */
export const CredentialMetadataSchema = z.object({
  name: CredentialNameSchema,
  version: z.number().int().positive(),
  keyId: MasterKeyIdSchema,
  createdBy: ActorSchema,
  createdAt: z.iso.datetime(),
});
export type CredentialMetadata = z.infer<typeof CredentialMetadataSchema>;

/** Codes of the errors the vault's commands answer with. */
export const VaultErrorCodes = {
  notFound: 'credential_not_found',
  /** The grant was redeemed before (by this or another vault instance). */
  grantUsed: 'credential_grant_used',
  /** The stored record does not decrypt: tampered, moved to another record, or under another key. */
  undecryptable: 'credential_undecryptable',
  /** The record is wrapped under a master key this vault was not given. */
  masterKeyUnavailable: 'master_key_unavailable',
  invalidRecipientKey: 'invalid_recipient_key',
  /** The vault has no key to verify grants with, so it redeems none. */
  grantVerificationUnavailable: 'grant_verification_unavailable',
} as const;

export const VaultCommands = {
  /** Write-only: stores a new version and answers its metadata; the value is never returned. */
  putCredential: defineCommand(
    'vault.credentials.put',
    z.object({ workspaceId, name: CredentialNameSchema, value: CredentialValueSchema, actor: ActorSchema }),
    CredentialMetadataSchema,
  ),
  listCredentials: defineCommand('vault.credentials.list', z.object({ workspaceId }), z.object({ items: z.array(CredentialMetadataSchema) })),
  deleteCredential: defineCommand(
    'vault.credentials.delete',
    z.object({ workspaceId, name: CredentialNameSchema, actor: ActorSchema }),
    z.object({ name: CredentialNameSchema, version: z.number().int().positive(), deletedAt: z.iso.datetime() }),
  ),
  /**
   * Redeems a single-use grant from policy. The value comes back sealed to the caller's
   * ephemeral X25519 key (base64 SPKI DER, or the raw 32 bytes), so it never crosses NATS in clear.
   */
  resolve: defineCommand(
    'vault.resolve',
    z.object({
      grant: z.string().min(1).max(4_096),
      recipientPublicKey: z.string().min(1).max(200),
      /**
       * The URL the value is for. An OAuth connection answers its access token only for the
       * resource it was made for (refreshed first when it expires soon); a plain secret ignores it.
       */
      audience: z.url({ protocol: /^https?$/ }).max(2048).optional(),
    }),
    z.object({ workspaceId, name: CredentialNameSchema, version: z.number().int().positive(), sealed: SealedCredentialSchema }),
  ),
  /**
   * Re-wraps every data key under the current (first) master key. Values are not re-encrypted,
   * so it is quick and credentials stay readable throughout; `remaining` counts records still
   * under another key (0 means the old keys may be removed from the configuration).
   */
  rotate: defineCommand(
    'vault.rotate',
    z.object({ actor: ActorSchema }),
    z.object({
      toKeyId: MasterKeyIdSchema,
      rewrapped: z.array(z.object({ fromKeyId: MasterKeyIdSchema, count: z.number().int().nonnegative() })),
      remaining: z.number().int().nonnegative(),
    }),
  ),
} as const;
