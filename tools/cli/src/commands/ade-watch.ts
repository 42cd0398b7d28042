import { isRunState, isRunTerminalEventType, isSuccess, isTerminal, runStateAfter, runStreamId } from '@packetagent/contracts';
import { ApiError, CliError, ConnectionError, ExitCode } from '../errors';
import { SseParser } from '../sse';
import { AdeExitCode, AdeOutcome, FeedEventSchema, type AdeDoor, type FeedEvent } from './ade-door-client';

/** Events per page when an ended run's feed is read up to now. */
const PAGE_SIZE = 200;

/** Before the server names its `retry:`, the first reconnection waits this long; each failure in a row doubles it. */
export const FIRST_RECONNECT_DELAY_MS = 1_000;
export const MAX_RECONNECT_DELAY_MS = 30_000;
/** The server sends a heartbeat every 15 s: three missed, and the connection is taken for dead. */
export const IDLE_TIMEOUT_MS = 45_000;

export type StopSignal = 'SIGINT' | 'SIGTERM';
const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGINT: 2, SIGTERM: 15 };

export interface WatchOptions {
  after?: string;
  ack?: boolean;
  untilTerminal?: string;
}

export interface WatchIo {
  stdout(text: string): void;
  stderr(text: string): void;
  json: boolean;
  /** Calls `handler` on Ctrl-C or SIGTERM until the returned function is called; absent, nothing stops the watch but its end. */
  onSignal?(handler: (signal: StopSignal) => void): () => void;
}

/** The wait before reconnection number `failures` (0 for the first after a working connection): doubling, capped. */
export function reconnectDelayMs(failures: number, baseMs: number): number {
  return Math.min(MAX_RECONNECT_DELAY_MS, Math.max(1, baseMs) * 2 ** Math.min(failures, 16));
}

/** One line per event: cursor, time, type, stream. */
export function eventLine(cursor: string, event: FeedEvent): string {
  return `${cursor}  ${event.occurredAt}  ${event.type}  ${event.stream}`;
}

/** True when `event` ends the run: a terminal run event on that run's own stream. */
export function endsRun(runId: string, event: FeedEvent): boolean {
  return event.stream === runStreamId(runId) && isRunTerminalEventType(event.type);
}

function parseEvent(data: string, cursor: string): FeedEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new CliError(`the event at cursor ${cursor} is not JSON`, ExitCode.failure);
  }
  const parsed = FeedEventSchema.safeParse(value);
  if (!parsed.success) throw new CliError(`unexpected event at cursor ${cursor}`, ExitCode.failure, parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })));
  return parsed.data;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

class IdleTimeout extends Error {}

/**
 * Acknowledges printed events, only ever forward: a cursor at or before the acknowledged one is
 * not sent again, and one another client of the actor overtook is dropped. A cursor that could
 * not be sent stays pending and goes with the next attempt.
 */
class Acknowledger {
  private pending: string | null = null;

  constructor(
    private readonly door: AdeDoor,
    private readonly stderr: (text: string) => void,
    private acknowledged: number,
  ) {}

  mark(cursor: string): void {
    if (Number(cursor) > this.acknowledged) this.pending = cursor;
  }

  async flush(): Promise<void> {
    const cursor = this.pending;
    if (cursor === null) return;
    try {
      this.acknowledged = Math.max(this.acknowledged, Number((await this.door.acknowledge(cursor)).cursor));
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'cursor_regression')) throw error;
      this.acknowledged = Number((await this.door.acknowledged()).cursor);
      this.stderr(`[cursor ${cursor} not acknowledged: another client of this actor acknowledged ${this.acknowledged} already]\n`);
    }
    if (this.pending === cursor) this.pending = null;
  }
}

/** Whether following again may help: a dropped or stalled connection, a busy or failing server; never a refusal. */
function transient(error: unknown, connectedBefore: boolean): boolean {
  if (error instanceof ConnectionError) return connectedBefore;
  if (error instanceof ApiError) return error.status === 429 || error.status >= 500;
  return !(error instanceof CliError);
}

function reasonOf(error: unknown, idle: boolean): string {
  if (idle) return `no data for ${IDLE_TIMEOUT_MS / 1000} s`;
  if (error instanceof CliError) return error.message;
  const cause = (error as { cause?: { message?: unknown } } | null)?.cause?.message;
  return `connection lost: ${typeof cause === 'string' ? cause : error instanceof Error ? error.message : String(error)}`;
}

/**
 * Follows the feed until the run named ends, or a signal stops it: answers the run's terminal
 * event, or null when stopped. Reconnects after the last cursor printed, waiting longer after
 * each failure in a row (from the server's `retry:`), and never for a refusal.
 */
async function follow(door: AdeDoor, io: WatchIo, options: WatchOptions, stop: AbortSignal): Promise<FeedEvent | null> {
  const acks = options.ack ? new Acknowledger(door, (text) => io.stderr(text), Number((await door.acknowledged()).cursor)) : null;
  let printed: string | undefined;
  let ended: FeedEvent | null = null;
  let connectedBefore = false;
  let failures = 0;
  let baseDelayMs = FIRST_RECONNECT_DELAY_MS;
  while (!stop.aborted) {
    let reason: string;
    const connection = new AbortController();
    const hangUp = () => connection.abort(stop.reason);
    stop.addEventListener('abort', hangUp, { once: true });
    try {
      await acks?.flush();
      if (ended) return ended;
      const body = await door.stream({ lastEventId: printed, after: options.after, signal: connection.signal });
      connectedBefore = true;
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = body.getReader();
      let idle = setTimeout(() => connection.abort(new IdleTimeout()), IDLE_TIMEOUT_MS);
      let closing = '';
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          clearTimeout(idle);
          idle = setTimeout(() => connection.abort(new IdleTimeout()), IDLE_TIMEOUT_MS);
          for (const message of parser.push(decoder.decode(chunk.value, { stream: true }))) {
            if (message.event === 'closing') {
              const data = JSON.parse(message.data) as { reason?: unknown; detail?: unknown };
              closing = `${String(data.reason)}${typeof data.detail === 'string' && data.detail ? `: ${data.detail}` : ''}`;
              continue;
            }
            if (message.id === undefined) continue;
            const event = parseEvent(message.data, message.id);
            io.stdout(io.json ? `${JSON.stringify(JSON.parse(message.data))}\n` : `${eventLine(message.id, event)}\n`);
            printed = message.id;
            failures = 0;
            if (options.untilTerminal !== undefined && endsRun(options.untilTerminal, event)) ended = event;
            acks?.mark(message.id);
            await acks?.flush();
            if (ended) return ended;
          }
        }
      } finally {
        clearTimeout(idle);
        reader.cancel().catch(() => undefined);
        baseDelayMs = parser.retryMs ?? baseDelayMs;
      }
      reason = closing ? `the server closed the stream (${closing})` : 'the stream ended';
    } catch (error) {
      if (stop.aborted) break;
      if (!transient(error, connectedBefore)) throw error;
      reason = reasonOf(error, connection.signal.reason instanceof IdleTimeout);
    } finally {
      stop.removeEventListener('abort', hangUp);
    }
    if (stop.aborted) break;
    const delay = reconnectDelayMs(failures++, baseDelayMs);
    const from = printed ?? options.after;
    io.stderr(`[${reason}; following again in ${delay / 1000} s ${from === undefined ? 'from the acknowledged cursor' : `after cursor ${from}`}]\n`);
    await pause(delay, stop);
  }
  return null;
}

/** The feed from the starting cursor up to now, by pages, printed and acknowledged as `follow` does; stops at the run's terminal event. */
async function printUpToNow(door: AdeDoor, io: WatchIo, options: WatchOptions): Promise<void> {
  const acks = options.ack ? new Acknowledger(door, (text) => io.stderr(text), Number((await door.acknowledged()).cursor)) : null;
  let after = options.after;
  for (;;) {
    const page = await door.events({ after, limit: PAGE_SIZE });
    for (const item of page.items) {
      const cursor = String(item.globalPosition);
      const data = JSON.stringify(item);
      const event = parseEvent(data, cursor);
      io.stdout(io.json ? `${data}\n` : `${eventLine(cursor, event)}\n`);
      acks?.mark(cursor);
      await acks?.flush();
      if (endsRun(options.untilTerminal!, event)) return;
    }
    if (page.caughtUp) return;
    after = page.nextCursor;
  }
}

/**
 * `packetagent ade watch`: the actor's feed, one line per event, until Ctrl-C or SIGTERM (exit 0),
 * or with --until-terminal until that run ends: exit 0 for run.succeeded, 6 for any other end,
 * 130 or 143 when a signal stops it first.
 */
export async function watchFeed(door: AdeDoor, io: WatchIo, options: WatchOptions): Promise<void> {
  // A run that has already ended may have done so before the starting cursor, and would be
  // waited for forever: the feed is then read in pages up to now, and the run's state decides.
  if (options.untilTerminal !== undefined) {
    const run = await door.run(options.untilTerminal);
    if (isRunState(run.state) && isTerminal(run.state)) {
      await printUpToNow(door, io, options);
      if (!isSuccess(run.state)) throw new AdeOutcome(`run ${run.id} ended: run.${run.state}`, AdeExitCode.runNotSucceeded);
      return;
    }
  }
  const stop = new AbortController();
  let received: StopSignal | null = null;
  const unsubscribe = io.onSignal?.((signal) => {
    received ??= signal;
    stop.abort();
  });
  let ended: FeedEvent | null;
  try {
    ended = await follow(door, io, options, stop.signal);
  } finally {
    unsubscribe?.();
  }
  if (options.untilTerminal === undefined) return;
  if (ended === null) {
    const signal: StopSignal = received ?? 'SIGINT';
    throw new AdeOutcome(`stopped by ${signal} before run ${options.untilTerminal} ended`, 128 + SIGNAL_NUMBERS[signal]);
  }
  const state = runStateAfter(ended.type);
  if (state === null || !isSuccess(state)) throw new AdeOutcome(`run ${options.untilTerminal} ended: ${ended.type}`, AdeExitCode.runNotSucceeded);
}
