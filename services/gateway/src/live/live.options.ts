export const LIVE_OPTIONS = Symbol('LIVE_OPTIONS');

export interface LiveOptions {
  /** Interval of `: heartbeat` comments, which keep proxies from closing an idle stream, in milliseconds. */
  heartbeatMs: number;
  /** Events one connection may have waiting to be written; past it the client is too slow and is disconnected. */
  bufferEvents: number;
  /** Open streams per workspace on one replica; more are refused with 429. */
  maxConnectionsPerWorkspace: number;
  /** Events read from the store per query while catching up. */
  catchUpPageSize: number;
  /** Name of the outbox relay whose cursor marks how far the store is settled. */
  relayName: string;
}

export const DEFAULT_LIVE_OPTIONS: LiveOptions = {
  heartbeatMs: 15_000,
  bufferEvents: 1_000,
  maxConnectionsPerWorkspace: 50,
  catchUpPageSize: 500,
  relayName: 'default',
};
