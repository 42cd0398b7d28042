import type { Tone } from '../../shared/format';
import type { ExecLimits, ExecResult, ExecState, ExecStream } from './sandbox.api';

/** A run of text from one stream, or a line the console adds (a gap in the live output). */
export interface ExecSegment {
  stream: ExecStream | 'note';
  text: string;
}

export interface ExecLogState {
  phase: 'waiting' | 'running' | 'ended';
  argv: string[] | null;
  driver: string | null;
  segments: ExecSegment[];
  result: ExecResult | null;
  /** `started` events seen: more than one means the stream was opened again and live text may be missing in between. */
  starts: number;
}

export const EMPTY_EXEC_LOG: ExecLogState = { phase: 'waiting', argv: null, driver: null, segments: [], result: null, starts: 0 };

export const LIVE_GAP_NOTE = '[the live stream was interrupted; output written meanwhile is in the download]\n';

/** Adds text, merging it into the last segment when it comes from the same stream. */
export function appendSegment(segments: readonly ExecSegment[], stream: ExecSegment['stream'], text: string): ExecSegment[] {
  if (!text) return [...segments];
  const last = segments.at(-1);
  if (last && last.stream === stream) return [...segments.slice(0, -1), { stream, text: last.text + text }];
  return [...segments, { stream, text }];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/**
 * One event of GET .../sandbox/exec/{id}/stream applied to what is shown: `started`, `output`
 * {stream, text}, `ended` {result}. Anything else (a `closing` notice, an event this console
 * does not know) changes nothing.
 */
export function applyExecEvent(state: ExecLogState, event: string, data: unknown): ExecLogState {
  const fields = record(data);
  switch (event) {
    case 'started': {
      const argv = Array.isArray(fields['argv']) ? fields['argv'].map(String) : state.argv;
      const gap = state.starts > 0 && state.phase !== 'ended';
      return {
        ...state,
        phase: state.phase === 'ended' ? 'ended' : 'running',
        argv,
        driver: typeof fields['driver'] === 'string' ? fields['driver'] : state.driver,
        segments: gap ? appendSegment(state.segments, 'note', LIVE_GAP_NOTE) : state.segments,
        starts: state.starts + 1,
      };
    }
    case 'output': {
      if (state.phase === 'ended') return state;
      const stream = fields['stream'] === 'stderr' ? 'stderr' : 'stdout';
      return { ...state, phase: 'running', segments: appendSegment(state.segments, stream, typeof fields['text'] === 'string' ? fields['text'] : '') };
    }
    case 'ended': {
      const result = record(fields['result']);
      if (typeof result['state'] !== 'string') return state;
      const ended = result as unknown as ExecResult;
      // Previews that are whole are all the output, where the live text may have started late or
      // been cut; an exec that had already ended gets its `ended` event alone, and only previews.
      const whole = ended.stdout?.truncated === false && ended.stderr?.truncated === false;
      if (state.starts === 0 || whole) return { ...fromResult(ended, state.argv), starts: state.starts };
      return { ...state, phase: 'ended', result: ended, segments: appendSegment(state.segments, 'note', '\n[live view: download the whole output]\n') };
    }
    default:
      return state;
  }
}

/** What is shown of an exec that has ended, when its live output was not followed: the previews of its result. */
export function fromResult(result: ExecResult, argv: string[] | null = null): ExecLogState {
  let segments: ExecSegment[] = appendSegment([], 'stdout', result.stdout.preview);
  segments = appendSegment(segments, 'stderr', result.stderr.preview);
  if (result.stdout.truncated || result.stderr.truncated) segments = appendSegment(segments, 'note', '\n[preview only: download the whole output]\n');
  return { phase: 'ended', argv, driver: result.driver, segments, result, starts: 0 };
}

/** How an exec ended, in words, and its colour. */
export function describeEnding(result: ExecResult): { text: string; tone: Tone } {
  const took = `after ${formatDuration(result.durationMs)}`;
  if (result.state === 'failed') return { text: `did not start: ${result.message ?? 'no reason given'}`, tone: 'bad' };
  if (result.limit === 'cancelled') return { text: `cancelled ${took}: the process tree was killed`, tone: 'warn' };
  if (result.limit) return { text: `killed at its ${result.limit.replace('_', ' ')} limit ${took}${result.message ? ` (${result.message})` : ''}`, tone: 'bad' };
  if (result.exitCode === null) return { text: `killed by ${result.signal ?? 'a signal'} ${took}`, tone: 'bad' };
  return { text: `exit ${result.exitCode} ${took}`, tone: result.exitCode === 0 ? 'ok' : 'bad' };
}

/** An exec's state as a badge tone: a clean exit is ok, any other end bad, running neutral. */
export function execTone(state: ExecState, exitCode: number | null, limit: string | null): Tone {
  if (state === 'running') return 'neutral';
  if (limit === 'cancelled') return 'warn';
  return state === 'exited' && exitCode === 0 ? 'ok' : 'bad';
}

export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1_000);
  return `${minutes} min ${String(seconds).padStart(2, '0')} s`;
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Each limit as a person reads it, in the order the sandbox lists them. */
export const LIMIT_LABELS: ReadonlyArray<{ key: keyof ExecLimits; label: string; format: (value: number) => string }> = [
  { key: 'wallTimeMs', label: 'Wall time', format: formatDuration },
  { key: 'cpuSeconds', label: 'CPU time', format: (s) => formatDuration(s * 1_000) },
  { key: 'memoryBytes', label: 'Memory', format: formatBytes },
  { key: 'pids', label: 'Processes and threads', format: String },
  { key: 'fileSizeBytes', label: 'Largest file written', format: formatBytes },
  { key: 'openFiles', label: 'Open files', format: String },
  { key: 'outputBytes', label: 'Output (stdout and stderr)', format: formatBytes },
  { key: 'tmpBytes', label: 'Private /tmp', format: formatBytes },
];

/**
 * `NAME=VALUE` lines of a form into an environment; a line without `=` is reported by its
 * number, so the form can say which.
 */
export function parseEnvLines(text: string): { env: Record<string, string>; bad: number[] } {
  const env: Record<string, string> = {};
  const bad: number[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (!line.trim()) return;
    const equals = line.indexOf('=');
    if (equals <= 0) bad.push(index + 1);
    else env[line.slice(0, equals).trim()] = line.slice(equals + 1);
  });
  return { env, bad };
}
