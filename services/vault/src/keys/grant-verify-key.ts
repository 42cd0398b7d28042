import { createPublicKey, type KeyObject } from 'node:crypto';
import { grantSigningKeys } from '@packetagent/contracts';
import { MasterKeyConfigurationError } from '../shared/errors';
import type { VaultLog, VaultModuleOptions } from '../vault.options';

export const GRANT_VERIFY_KEY = Symbol('GRANT_VERIFY_KEY');

/** Holder so Nest can inject "no key" (a null provider value would read as missing). */
export interface GrantVerifyKey {
  key: KeyObject | null;
}

/**
 * Policy's Ed25519 public key: given directly, or derived from the shared signing seed. Without
 * one the vault still stores credentials but redeems no grant, and says so at start.
 */
export function loadGrantVerifyKey(options: VaultModuleOptions, log: VaultLog): GrantVerifyKey {
  let key: KeyObject | null = null;
  try {
    if (options.grantVerifyKey && typeof options.grantVerifyKey !== 'string') key = options.grantVerifyKey;
    else if (options.grantVerifyKey) {
      const text = options.grantVerifyKey.trim();
      key = text.includes('BEGIN') ? createPublicKey(text) : createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
    } else if (options.grantSigningKey) key = grantSigningKeys(options.grantSigningKey).publicKey;
  } catch {
    throw new MasterKeyConfigurationError('the grant verification key is not a valid Ed25519 public key or signing seed');
  }
  if (key && key.asymmetricKeyType !== 'ed25519') throw new MasterKeyConfigurationError('the grant verification key is not an Ed25519 key');
  if (!key) log('warn', 'vault has no grant verification key (PACKETAGENT_GRANT_SIGNING_KEY): every credential grant will be refused');
  return { key };
}
