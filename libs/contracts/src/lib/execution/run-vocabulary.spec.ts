import {
  isRunState,
  isRunTerminalEventType,
  isSuccess,
  isTerminal,
  RUN_STATES,
  RUN_TERMINAL_EVENT_TYPES,
  runControlStreamId,
  runIdFromStream,
  runStateAfter,
  runStreamId,
  TERMINAL_RUN_STATES,
  type RunState,
} from './run-vocabulary';

const RUN = '0193a000-0000-7000-8000-000000000001';

describe(runIdFromStream.name, () => {
  it('reads back the run id it named a stream after', () => {
    expect(runIdFromStream(runStreamId(RUN))).toBe(RUN);
    expect(runStreamId(RUN)).toBe(`run-${RUN}`);
  });

  it('answers null for a stream that is not a run stream', () => {
    expect(runIdFromStream(runControlStreamId(RUN))).toBeNull();
    expect(runIdFromStream(`policy-${RUN}`)).toBeNull();
    expect(runIdFromStream('run-')).toBeNull();
    expect(runIdFromStream('run')).toBeNull();
  });

  it('names the control stream apart from the run stream', () => {
    expect(runControlStreamId(RUN)).toBe(`runctl-${RUN}`);
  });
});

describe(isSuccess.name, () => {
  it.each(TERMINAL_RUN_STATES)('reads %s as terminal, and as a success only when it is succeeded', (state) => {
    expect(isTerminal(state)).toBe(true);
    expect(isSuccess(state)).toBe(state === 'succeeded');
  });

  it.each(['queued', 'running', 'waiting'] as const)('reads %s as neither terminal nor a success', (state) => {
    expect(isTerminal(state)).toBe(false);
    expect(isSuccess(state)).toBe(false);
  });

  it('reads a state it does not know as over and never as a success', () => {
    const added = 'superseded' as RunState;

    expect(isRunState(added)).toBe(false);
    expect(isTerminal(added)).toBe(true);
    expect(isSuccess(added)).toBe(false);
  });

  it('lists every state once, the active ones first', () => {
    expect(new Set(RUN_STATES).size).toBe(RUN_STATES.length);
    expect(RUN_STATES.slice(0, 3)).toEqual(['queued', 'running', 'waiting']);
    expect(RUN_STATES.every(isRunState)).toBe(true);
  });
});

describe(runStateAfter.name, () => {
  it('has one event per terminal state, each ending the run in that state', () => {
    expect(RUN_TERMINAL_EVENT_TYPES.map(runStateAfter)).toEqual([...TERMINAL_RUN_STATES]);
    expect(RUN_TERMINAL_EVENT_TYPES.every(isRunTerminalEventType)).toBe(true);
  });

  it('moves a run back to running or waiting on the events that do so, and leaves it on the others', () => {
    expect(['run.started', 'run.claimed', 'run.resumed', 'run.waiting'].map(runStateAfter)).toEqual(['running', 'running', 'running', 'waiting']);
    expect(runStateAfter('run.model_turn')).toBeNull();
    expect(runStateAfter('run.stop_requested')).toBeNull();
    expect(isRunTerminalEventType('run.waiting')).toBe(false);
    expect(isRunTerminalEventType('run.stop_requested')).toBe(false);
  });
});
