import type { KeyObject } from 'node:crypto';

export type VaultLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface VaultModuleOptions {
  /**
   * production refuses to start without a strong master key; development generates one under
   * `dataDir` when none is given, and says so loudly.
   */
  mode: 'production' | 'development';
  /**
   * Master keys, 32 bytes each, base64; the first is current (new data keys are wrapped under
   * it), the others stay readable until `vault.rotate` has moved every record off them.
   */
  masterKeys?: readonly string[];
  /** A file holding master keys in the same form, one per line (or comma-separated); read at start. */
  masterKeyFile?: string;
  /** Where development mode keeps its generated `master.key`. */
  dataDir?: string;
  /** Policy's Ed25519 public key for credential grants: a KeyObject, PEM, or base64 SPKI DER. */
  grantVerifyKey?: KeyObject | string;
  /** The 32-byte grant-signing seed policy uses; the public key is derived from it. */
  grantSigningKey?: string;
  /** Rows re-wrapped per transaction by `vault.rotate`. */
  rotationBatchSize?: number;
  /** OAuth connections to MCP servers: who the vault may reach and when tokens are refreshed. */
  oauth?: {
    /** `host:port` pairs of authorization servers or MCP servers that may resolve to private addresses. */
    allowPrivate?: readonly string[];
    /** An access token this close to its expiry is refreshed before it is handed out (at most half its lifetime). Default 60 s. */
    refreshMarginSeconds?: number;
    /** Each request to an authorization server. Default 15 s. */
    timeoutMs?: number;
  };
  clock?: () => Date;
  log?: VaultLog;
}

export const VAULT_OPTIONS = Symbol('VAULT_OPTIONS');

export interface ResolvedVaultOptions {
  mode: 'production' | 'development';
  rotationBatchSize: number;
  oauth: { allowPrivate: readonly string[]; refreshMarginMs: number; timeoutMs: number };
  clock: () => Date;
  log: VaultLog;
}

export function resolveVaultOptions(options: VaultModuleOptions): ResolvedVaultOptions {
  const rotationBatchSize = options.rotationBatchSize ?? 100;
  if (!Number.isInteger(rotationBatchSize) || rotationBatchSize < 1) throw new Error('vault option rotationBatchSize must be a positive integer');
  if (options.mode !== 'production' && options.mode !== 'development') throw new Error('vault option mode must be production or development');
  const refreshMarginSeconds = options.oauth?.refreshMarginSeconds ?? 60;
  const timeoutMs = options.oauth?.timeoutMs ?? 15_000;
  if (!Number.isFinite(refreshMarginSeconds) || refreshMarginSeconds < 0) throw new Error('vault option oauth.refreshMarginSeconds must be a non-negative number');
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100) throw new Error('vault option oauth.timeoutMs must be an integer of at least 100');
  return {
    mode: options.mode,
    rotationBatchSize,
    oauth: { allowPrivate: options.oauth?.allowPrivate ?? [], refreshMarginMs: refreshMarginSeconds * 1000, timeoutMs },
    clock: options.clock ?? (() => new Date()),
    log: options.log ?? (() => undefined),
  };
}
