import type { ExecLiveMessage, ExecRecord, ExecResult } from '@packetagent/contracts';
import type { LiveSink } from '../live/live-session';
import { ExecStreamSession, type ExecStreamCloseReason } from './exec-stream-session';

const EXEC = 'op-1';
const empty = { preview: '', bytes: 0, truncated: false, digest: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', chunks: [] };

const result: ExecResult = {
  execId: EXEC,
  workspaceId: 'ws1',
  runId: null,
  driver: 'bubblewrap',
  computer: null,
  killConfirmed: null,
  state: 'exited',
  exitCode: 0,
  signal: null,
  limit: null,
  message: null,
  durationMs: 5,
  stdout: { ...empty, preview: 'hi\n', bytes: 3 },
  stderr: empty,
  egress: [],
  limits: { wallTimeMs: 1_000, cpuSeconds: 1, memoryBytes: 16 * 1024 ** 2, pids: 4, fileSizeBytes: 1024, openFiles: 16, outputBytes: 1024, tmpBytes: 1024 ** 2 },
  unenforced: [],
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:00.005Z',
};

const running: ExecRecord = {
  execId: EXEC,
  workspaceId: 'ws1',
  runId: null,
  argv: ['echo', 'hi'],
  cwd: '.',
  state: 'running',
  driver: 'bubblewrap',
  computer: null,
  exitCode: null,
  limit: null,
  requestedBy: { kind: 'user', id: 'u1' },
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: null,
  result: null,
};
const ended: ExecRecord = { ...running, state: 'exited', exitCode: 0, endedAt: result.endedAt, result };

class FakeSink implements LiveSink {
  chunks: string[] = [];
  ended = false;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  end(): void {
    this.ended = true;
  }
  events(): Array<{ event: string; data: unknown }> {
    return this.chunks.flatMap((chunk) => {
      const match = /^event: (\w+)\ndata: (.*)\n\n$/s.exec(chunk);
      return match ? [{ event: match[1]!, data: JSON.parse(match[2]!) as unknown }] : [];
    });
  }
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function build(reread: () => Promise<ExecRecord | null> = () => Promise.resolve(running)) {
  const sink = new FakeSink();
  const closed: ExecStreamCloseReason[] = [];
  const sut = new ExecStreamSession(sink, { heartbeatMs: 15_000, reread }, (reason) => closed.push(reason));
  return { sut, sink, closed };
}

const output = (seq: number, text: string, stream: 'stdout' | 'stderr' = 'stdout'): ExecLiveMessage => ({ kind: 'output', execId: EXEC, seq, stream, text });

describe(ExecStreamSession.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers an exec that has already ended with its ended event alone, then closes', () => {
    const { sut, sink, closed } = build();

    sut.start(ended);

    expect(sink.events()).toEqual([{ event: 'ended', data: { result } }]);
    expect(sink.ended).toBe(true);
    expect(closed).toEqual(['ended']);
  });

  it('sends started from the record, what arrived meanwhile, live output, then ended and closes', () => {
    const { sut, sink, closed } = build();

    sut.start(running, [{ kind: 'started', execId: EXEC, seq: 0, argv: ['echo', 'hi'], driver: 'bubblewrap' }, output(1, 'h')]);
    sut.offer(output(2, 'oops', 'stderr'));
    sut.offer({ kind: 'ended', execId: EXEC, seq: 3, result });
    sut.offer(output(4, 'after the end'));

    expect(sink.events()).toEqual([
      { event: 'started', data: { execId: EXEC, argv: ['echo', 'hi'], driver: 'bubblewrap', startedAt: running.startedAt } },
      { event: 'output', data: { stream: 'stdout', text: 'h' } },
      { event: 'output', data: { stream: 'stderr', text: 'oops' } },
      { event: 'ended', data: { result } },
    ]);
    expect(closed).toEqual(['ended']);
  });

  it('writes a heartbeat at every interval and ends the stream when the record says the exec ended', async () => {
    let record = running;
    const { sut, sink, closed } = build(() => Promise.resolve(record));
    sut.start(running);

    jest.advanceTimersByTime(15_000);
    await settle();
    expect(sink.chunks.filter((chunk) => chunk === ': heartbeat\n\n')).toHaveLength(1);
    expect(closed).toEqual([]);

    record = ended;
    jest.advanceTimersByTime(15_000);
    await settle();
    expect(sink.events().at(-1)).toEqual({ event: 'ended', data: { result } });
    expect(closed).toEqual(['ended']);
  });

  it('tells the client why when the server ends the stream first, and writes nothing after the client left', () => {
    const stopping = build();
    stopping.sut.start(running);
    stopping.sut.close('shutting_down', 'the server is stopping');
    expect(stopping.sink.events().at(-1)).toEqual({ event: 'closing', data: { reason: 'shutting_down', detail: 'the server is stopping' } });

    const gone = build();
    gone.sut.start(running);
    gone.sut.close('client_gone');
    gone.sut.offer(output(1, 'late'));
    jest.advanceTimersByTime(60_000);
    expect(gone.sink.events().map((e) => e.event)).toEqual(['started']);
    expect(gone.sink.chunks).not.toContain(': heartbeat\n\n');
    expect(gone.closed).toEqual(['client_gone']);
  });
});
