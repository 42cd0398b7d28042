export type NotificationsLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface NotificationsModuleOptions {
  /** Signs remote-control links (at least 32 bytes). Links signed with another key are refused. */
  callbackSigningKey: Buffer;
  /** The URL people reach the gateway at: links in messages start with it. */
  publicUrl: string;
  /** How long a remote-control link works (an attention's link never outlives its deadline). */
  callbackTtlSeconds?: number;
  /** A delivery not made by then is dead-lettered (`expired`). */
  deliveryTtlSeconds?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How long a replica holds a delivery it is sending; a lapsed lease makes it due again. */
  leaseMs?: number;
  /** How long a route's credential read from the vault is kept in memory for the next deliveries (0: read it for every attempt). */
  credentialCacheSeconds?: number;
  /** Deliveries one replica sends at once. */
  concurrency?: number;
  /** Poll for due retries at least this often (new deliveries ring a doorbell). */
  pollMs?: number;
  /** Per attempt, from the address checks to the last byte. */
  attemptTimeoutMs?: number;
  /** Private `host:port` destinations channels may reach (PACKETAGENT_HTTP_ALLOW_PRIVATE). */
  allowPrivate?: readonly string[];
  /** Off: the service queues and serves its API, but this replica sends nothing (tests, read replicas). */
  deliver?: boolean;
  clock?: () => Date;
  random?: () => number;
  log?: NotificationsLog;
}

export type ResolvedNotificationsOptions = Required<Omit<NotificationsModuleOptions, 'callbackSigningKey' | 'allowPrivate'>> & {
  callbackSigningKey: Buffer;
  allowPrivate: readonly string[];
};

export const NOTIFICATIONS_OPTIONS = Symbol('NOTIFICATIONS_OPTIONS');

export function resolveNotificationsOptions(options: NotificationsModuleOptions): ResolvedNotificationsOptions {
  const resolved: ResolvedNotificationsOptions = {
    callbackSigningKey: options.callbackSigningKey,
    publicUrl: options.publicUrl.replace(/\/+$/, ''),
    callbackTtlSeconds: options.callbackTtlSeconds ?? 24 * 3_600,
    deliveryTtlSeconds: options.deliveryTtlSeconds ?? 24 * 3_600,
    retryBaseMs: options.retryBaseMs ?? 1_000,
    retryMaxMs: options.retryMaxMs ?? 10 * 60_000,
    leaseMs: options.leaseMs ?? 60_000,
    credentialCacheSeconds: options.credentialCacheSeconds ?? 60,
    concurrency: options.concurrency ?? 64,
    pollMs: options.pollMs ?? 1_000,
    attemptTimeoutMs: options.attemptTimeoutMs ?? 15_000,
    allowPrivate: options.allowPrivate ?? [],
    deliver: options.deliver ?? true,
    clock: options.clock ?? (() => new Date()),
    random: options.random ?? Math.random,
    log: options.log ?? (() => undefined),
  };
  if (resolved.callbackSigningKey.length < 32) throw new Error('notifications option callbackSigningKey must be at least 32 bytes');
  if (!Number.isInteger(resolved.credentialCacheSeconds) || resolved.credentialCacheSeconds < 0 || resolved.credentialCacheSeconds > 3_600) {
    throw new Error('notifications option credentialCacheSeconds must be an integer from 0 to 3600');
  }
  for (const key of ['callbackTtlSeconds', 'deliveryTtlSeconds', 'retryBaseMs', 'retryMaxMs', 'leaseMs', 'concurrency', 'pollMs', 'attemptTimeoutMs'] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 1) throw new Error(`notifications option ${key} must be a positive integer`);
  }
  if (resolved.attemptTimeoutMs >= resolved.leaseMs) throw new Error('notifications option attemptTimeoutMs must be shorter than leaseMs');
  try {
    new URL(resolved.publicUrl);
  } catch {
    throw new Error('notifications option publicUrl must be a URL');
  }
  return resolved;
}
