import { appendSegment, applyExecEvent, describeEnding, EMPTY_EXEC_LOG, execTone, formatBytes, formatDuration, fromResult, LIVE_GAP_NOTE, parseEnvLines } from './exec-log';
import type { ExecResult } from './sandbox.api';

const output = (preview: string, truncated = false) => ({ preview, bytes: preview.length, truncated, digest: 'a'.repeat(64) });

function result(fields: Partial<ExecResult> = {}): ExecResult {
  return {
    execId: 'op-1',
    workspaceId: 'ws1',
    runId: null,
    driver: 'bubblewrap',
    state: 'exited',
    exitCode: 0,
    signal: null,
    limit: null,
    message: null,
    durationMs: 1_500,
    stdout: output('ok\n'),
    stderr: output(''),
    limits: { wallTimeMs: 1, cpuSeconds: 1, memoryBytes: 1, pids: 1, fileSizeBytes: 1, openFiles: 1, outputBytes: 1, tmpBytes: 1 },
    unenforced: [],
    startedAt: '2026-03-01T12:00:00.000Z',
    endedAt: '2026-03-01T12:00:01.500Z',
    ...fields,
  };
}

describe(applyExecEvent.name, () => {
  it('follows started, output of both streams in order, then ended, keeping the live text when the previews are not whole', () => {
    let sut = applyExecEvent(EMPTY_EXEC_LOG, 'started', { execId: 'op-1', argv: ['npm', 'test'], driver: 'bubblewrap' });
    sut = applyExecEvent(sut, 'output', { stream: 'stdout', text: 'a' });
    sut = applyExecEvent(sut, 'output', { stream: 'stdout', text: 'b\n' });
    sut = applyExecEvent(sut, 'output', { stream: 'stderr', text: 'warn\n' });
    sut = applyExecEvent(sut, 'ended', { result: result({ stdout: output('a', true) }) });

    expect(sut).toMatchObject({ phase: 'ended', argv: ['npm', 'test'], driver: 'bubblewrap', starts: 1, result: { exitCode: 0 } });
    expect(sut.segments).toEqual([
      { stream: 'stdout', text: 'ab\n' },
      { stream: 'stderr', text: 'warn\n' },
      { stream: 'note', text: '\n[live view: download the whole output]\n' },
    ]);
  });

  it('shows whole previews at the end rather than live text that started late', () => {
    let sut = applyExecEvent(EMPTY_EXEC_LOG, 'started', { argv: ['seq', '3'] });
    sut = applyExecEvent(sut, 'output', { stream: 'stdout', text: '3\n' });
    sut = applyExecEvent(sut, 'ended', { result: result({ stdout: output('1\n2\n3\n') }) });

    expect(sut.segments).toEqual([{ stream: 'stdout', text: '1\n2\n3\n' }]);
    expect(sut).toMatchObject({ phase: 'ended', argv: ['seq', '3'], starts: 1 });
  });

  it('says where live text may be missing when the stream started again, and ignores what it does not know', () => {
    let sut = applyExecEvent(EMPTY_EXEC_LOG, 'started', { argv: ['sleep', '9'] });
    sut = applyExecEvent(sut, 'output', { stream: 'stdout', text: 'x' });
    sut = applyExecEvent(sut, 'closing', { reason: 'shutting_down' });
    sut = applyExecEvent(sut, 'started', { argv: ['sleep', '9'] });
    sut = applyExecEvent(sut, 'ended', { result: 'not a result' });

    expect(sut.phase).toBe('running');
    expect(sut.segments).toEqual([
      { stream: 'stdout', text: 'x' },
      { stream: 'note', text: LIVE_GAP_NOTE },
    ]);
  });
});

describe(fromResult.name, () => {
  it('is what an ended event shows when nothing was followed before it', () => {
    expect(applyExecEvent(EMPTY_EXEC_LOG, 'ended', { result: result() })).toEqual(fromResult(result()));
  });


  it("shows an ended exec's previews, and says when they are not the whole output", () => {
    expect(fromResult(result({ stdout: output('out'), stderr: output('err', true) })).segments).toEqual([
      { stream: 'stdout', text: 'out' },
      { stream: 'stderr', text: 'err' },
      { stream: 'note', text: '\n[preview only: download the whole output]\n' },
    ]);
    expect(fromResult(result({ stdout: output('') })).segments).toEqual([]);
  });
});

describe(describeEnding.name, () => {
  it('names the exit code, the limit, a cancel, a signal or why it never started', () => {
    expect(describeEnding(result())).toEqual({ text: 'exit 0 after 1.5 s', tone: 'ok' });
    expect(describeEnding(result({ exitCode: 2 }))).toEqual({ text: 'exit 2 after 1.5 s', tone: 'bad' });
    expect(describeEnding(result({ state: 'killed', exitCode: null, limit: 'wall_time', message: 'wall time limit of 1000 ms reached' }))).toEqual({ text: 'killed at its wall time limit after 1.5 s (wall time limit of 1000 ms reached)', tone: 'bad' });
    expect(describeEnding(result({ state: 'killed', exitCode: null, limit: 'cancelled' }))).toEqual({ text: 'cancelled after 1.5 s: the process tree was killed', tone: 'warn' });
    expect(describeEnding(result({ state: 'killed', exitCode: null, signal: 'SIGSEGV' })).text).toBe('killed by SIGSEGV after 1.5 s');
    expect(describeEnding(result({ state: 'failed', exitCode: null, message: 'bwrap: no permission' }))).toEqual({ text: 'did not start: bwrap: no permission', tone: 'bad' });
  });
});

describe('display helpers', () => {
  it('colours exec states', () => {
    expect([execTone('running', null, null), execTone('exited', 0, null), execTone('exited', 1, null), execTone('killed', null, 'cancelled'), execTone('failed', null, null)]).toEqual(['neutral', 'ok', 'bad', 'warn', 'bad']);
  });

  it('formats durations and sizes', () => {
    expect([formatDuration(250), formatDuration(12_300), formatDuration(605_000)]).toEqual(['250 ms', '12.3 s', '10 min 05 s']);
    expect([formatBytes(512), formatBytes(1024 ** 3), formatBytes(1536)]).toEqual(['512 bytes', '1 GiB', '1.5 KiB']);
  });

  it('reads NAME=VALUE lines, naming the lines that are not', () => {
    expect(parseEnvLines('CI=1\n\nTZ=Europe/Paris\nnonsense\nA=b=c')).toEqual({ env: { CI: '1', TZ: 'Europe/Paris', A: 'b=c' }, bad: [4] });
  });

  it('merges text of the same stream', () => {
    expect(appendSegment([{ stream: 'stdout', text: 'a' }], 'stdout', 'b')).toEqual([{ stream: 'stdout', text: 'ab' }]);
    expect(appendSegment([{ stream: 'stdout', text: 'a' }], 'stdout', '')).toEqual([{ stream: 'stdout', text: 'a' }]);
  });
});
