export const COMPUTERS_ROUTES_OPTIONS = Symbol('COMPUTERS_ROUTES_OPTIONS');

export interface ComputersRoutesOptions {
  /** The sandbox's SSH connect timeout (PACKETAGENT_COMPUTER_CONNECT_TIMEOUT_MS), in milliseconds. */
  connectTimeoutMs: number;
}

export const DEFAULT_COMPUTERS_ROUTES_OPTIONS: ComputersRoutesOptions = { connectTimeoutMs: 10_000 };

/**
 * How long registering or probing waits for the registry: a probe connects and then runs its
 * check, each bounded by the connect timeout, after reading the key from the vault.
 */
export function connectingReplyMs(options: ComputersRoutesOptions): number {
  return 2 * options.connectTimeoutMs + 10_000;
}
