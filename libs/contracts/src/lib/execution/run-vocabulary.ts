/**
 * The run's vocabulary, written once for the services, the tools and the console: the names of
 * its streams, its states and the events that end it. It imports nothing, so the browser build
 * of the console can take it as it is.
 */

const RUN_STREAM_PREFIX = 'run-';

/** The run's own stream: admission, then everything its supervisor records. */
export function runStreamId(runId: string): string {
  return `${RUN_STREAM_PREFIX}${runId}`;
}

/** The run's id when `stream` is a run's stream, otherwise null. */
export function runIdFromStream(stream: string): string | null {
  return stream.startsWith(RUN_STREAM_PREFIX) && stream.length > RUN_STREAM_PREFIX.length ? stream.slice(RUN_STREAM_PREFIX.length) : null;
}

/** The run's control stream: operator requests (stop, pause, resume, revoke) as intake records them. */
export function runControlStreamId(runId: string): string {
  return `runctl-${runId}`;
}

export const ACTIVE_RUN_STATES = ['queued', 'running', 'waiting'] as const;

/** The states a run ends in. Code asks `isSuccess` or `isTerminal`; it never lists failures, so a state added later can never read as a pass. */
export const TERMINAL_RUN_STATES = ['succeeded', 'failed', 'cancelled', 'abandoned', 'rejected', 'expired', 'revoked', 'budget_exhausted', 'timed_out'] as const;

/** Run states as the API reports them. */
export const RUN_STATES = [...ACTIVE_RUN_STATES, ...TERMINAL_RUN_STATES] as const;

export type RunState = (typeof RUN_STATES)[number];
export type TerminalRunState = (typeof TERMINAL_RUN_STATES)[number];
export type RunTerminalEventType = `run.${TerminalRunState}`;

function terminalEventType(state: TerminalRunState): RunTerminalEventType {
  return `run.${state}`;
}

/** Events announcing that a run reached a terminal state (`run.<state>`); intake frees the run's slot on each. */
export const RUN_TERMINAL_EVENT_TYPES: readonly RunTerminalEventType[] = TERMINAL_RUN_STATES.map(terminalEventType);

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_RUN_STATES);
const KNOWN: ReadonlySet<string> = new Set(RUN_STATES);

export function isRunState(value: string): value is RunState {
  return KNOWN.has(value);
}

/** Anything not known to be active is over: a state this code does not know never reads as still running. */
export function isTerminal(state: RunState): boolean {
  return !ACTIVE.has(state);
}

export function isSuccess(state: RunState): boolean {
  return state === 'succeeded';
}

const STATE_AFTER: ReadonlyMap<string, RunState> = new Map<string, RunState>([
  ['run.started', 'running'],
  ['run.claimed', 'running'],
  ['run.resumed', 'running'],
  ['run.waiting', 'waiting'],
  ...TERMINAL_RUN_STATES.map((state) => [terminalEventType(state), state] as const),
]);

/** The state a run is in after an event of this type, or null when the type does not move it. */
export function runStateAfter(eventType: string): RunState | null {
  return STATE_AFTER.get(eventType) ?? null;
}

export function isRunTerminalEventType(eventType: string): eventType is RunTerminalEventType {
  const state = STATE_AFTER.get(eventType);
  return state !== undefined && isTerminal(state);
}
