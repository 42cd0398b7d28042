export const SANDBOX_ROUTES_OPTIONS = Symbol('SANDBOX_ROUTES_OPTIONS');

export interface SandboxRoutesOptions {
  /** Interval of `: heartbeat` comments on an exec's stream, and of re-reading its record there (an `ended` message lost, a replica gone), in milliseconds. */
  heartbeatMs: number;
  /** Open exec streams per workspace on one replica; more are refused with 429. */
  maxStreamsPerWorkspace: number;
  /** Added to an exec's wall-time limit to wait for the sandbox's answer (storing the output, recording the end), in milliseconds. */
  replyMarginMs: number;
  /** While neither the `started` message nor the end of a new exec has come (a driver slow to start, a lost message), its record is asked for this often, in milliseconds. */
  startCheckMs: number;
}

export const DEFAULT_SANDBOX_ROUTES_OPTIONS: SandboxRoutesOptions = {
  heartbeatMs: 15_000,
  maxStreamsPerWorkspace: 50,
  replyMarginMs: 60_000,
  startCheckMs: 2_000,
};
