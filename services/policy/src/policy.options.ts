import { grantSigningKeys } from '@packetagent/contracts';
import type { KeyObject } from 'node:crypto';

export type PolicyLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface PolicyModuleOptions {
  /**
   * 32-byte Ed25519 seed (base64 or base64url) that signs credential grants; the vault holds
   * the matching public key. Without one, a key pair for this process only.
   */
  grantSigningKey?: string;
  /** Deadline of an attention whose grant sets none, in seconds. */
  defaultApprovalTimeoutSeconds?: number;
  /** Lifetime of an issued credential grant, in seconds. */
  credentialGrantTtlSeconds?: number;
  /** How long to wait for the scheduler to accept a deadline timer, in milliseconds. */
  timerRequestTimeoutMs?: number;
  /** How long to wait for the sandbox service to answer a computer's record, in milliseconds. */
  computerRequestTimeoutMs?: number;
  clock?: () => Date;
  log?: PolicyLog;
}

export interface ResolvedPolicyOptions {
  signingKey: KeyObject;
  defaultApprovalTimeoutSeconds: number;
  credentialGrantTtlSeconds: number;
  timerRequestTimeoutMs: number;
  computerRequestTimeoutMs: number;
  clock: () => Date;
  log: PolicyLog;
}

export const POLICY_OPTIONS = Symbol('POLICY_OPTIONS');

export function resolvePolicyOptions(options: PolicyModuleOptions = {}): ResolvedPolicyOptions {
  const resolved: ResolvedPolicyOptions = {
    signingKey: grantSigningKeys(options.grantSigningKey).privateKey,
    defaultApprovalTimeoutSeconds: options.defaultApprovalTimeoutSeconds ?? 900,
    credentialGrantTtlSeconds: options.credentialGrantTtlSeconds ?? 60,
    timerRequestTimeoutMs: options.timerRequestTimeoutMs ?? 5_000,
    computerRequestTimeoutMs: options.computerRequestTimeoutMs ?? 3_000,
    clock: options.clock ?? (() => new Date()),
    log: options.log ?? (() => undefined),
  };
  for (const key of ['defaultApprovalTimeoutSeconds', 'credentialGrantTtlSeconds', 'timerRequestTimeoutMs', 'computerRequestTimeoutMs'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] <= 0) throw new Error(`policy option ${key} must be a positive number`);
  }
  return resolved;
}
