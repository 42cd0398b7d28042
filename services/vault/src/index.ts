export { VaultModule } from './vault.module';
export { VAULT_OPTIONS, resolveVaultOptions, type VaultModuleOptions, type ResolvedVaultOptions, type VaultLog } from './vault.options';
export { loadMasterKeyRing, masterKeyId, weakness as masterKeyWeakness, MasterKeyRing, MASTER_KEY_BYTES, MASTER_KEY_RING, type MasterKey } from './keys/master-key-ring';
export {
  CredentialNotFoundError,
  CredentialGrantUsedError,
  CredentialUndecryptableError,
  MasterKeyUnavailableError,
  GrantVerificationUnavailableError,
  MasterKeyConfigurationError,
} from './shared/errors';
