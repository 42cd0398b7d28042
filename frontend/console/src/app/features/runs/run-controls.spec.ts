import type { Attention } from '../approvals/attention-facts';
import { describeWait, isAnswerable, runControls, summaryTrails } from './run-controls';

const run = (state: string, changes: { pauseRequested?: boolean; stopRequested?: boolean } = {}) => ({ state, pauseRequested: false, stopRequested: false, ...changes });

describe(runControls.name, () => {
  it('offers stop and pause to a queued or running run', () => {
    expect(runControls(run('queued'), null)).toEqual({ stop: true, pause: true, resume: false });
    expect(runControls(run('running'), null)).toEqual({ stop: true, pause: true, resume: false });
  });

  it('offers pause but not resume to a run waiting on an approval', () => {
    expect(runControls(run('waiting'), { reason: 'approval', attentionId: 'att1' })).toEqual({ stop: true, pause: true, resume: false });
  });

  it('offers resume instead of pause once a pause is asked for or the run is paused', () => {
    expect(runControls(run('running', { pauseRequested: true }), null)).toEqual({ stop: true, pause: false, resume: true });
    expect(runControls(run('waiting'), { reason: 'paused', attentionId: null })).toEqual({ stop: true, pause: false, resume: true });
  });

  it('offers nothing more than the stop already asked for, and nothing to an ended run', () => {
    expect(runControls(run('running', { stopRequested: true }), null)).toEqual({ stop: false, pause: false, resume: false });
    expect(runControls(run('succeeded'), null)).toEqual({ stop: false, pause: false, resume: false });
    expect(runControls(run('some_new_state'), null)).toEqual({ stop: false, pause: false, resume: false });
  });
});

describe(describeWait.name, () => {
  const attention = { id: 'att1', tool: 'slack_post', verb: 'POST', resource: '#ops', arguments: {} } as unknown as Attention;

  it('says which tool call an approval is for', () => {
    expect(describeWait({ reason: 'approval', attentionId: 'att1' }, attention)).toBe('approval of slack_post POST on #ops');
    expect(describeWait({ reason: 'approval', attentionId: 'att1' }, null)).toBe('an approval');
  });

  it('names the other waits in words', () => {
    const budget = { ...attention, tool: 'budget_request', arguments: { kind: 'budget_request', evidence: { requestedUsd: 2, spentUsd: 1, limitUsd: 1, reason: 'more' } } } as Attention;
    expect(describeWait({ reason: 'budget', attentionId: 'att2' }, budget)).toBe('a budget request for $2.00 more');
    expect(describeWait({ reason: 'question', attentionId: 'att3' }, null)).toBe('an answer to its question');
    expect(describeWait({ reason: 'paused', attentionId: null }, null)).toBe('an operator to resume it (paused)');
    expect(describeWait({ reason: 'reconnect', attentionId: null }, null)).toBe('a tool connection to be reconnected');
    expect(describeWait({ reason: 'new_reason', attentionId: null }, null)).toBe('new reason');
  });

  it('finds a wait answerable only when it names an attention record', () => {
    expect(isAnswerable({ reason: 'approval', attentionId: 'att1' })).toBe(true);
    expect(isAnswerable({ reason: 'paused', attentionId: null })).toBe(false);
    expect(isAnswerable(null)).toBe(false);
  });
});

describe(summaryTrails.name, () => {
  const summary = (state: string, changes: { waitingOn?: { reason: string; attentionId: string | null } | null; endedAt?: string | null } = {}) => ({ state, waitingOn: null, endedAt: null, ...changes });

  it('trails while it has another state than the run, or none yet', () => {
    expect(summaryTrails({ state: 'waiting' }, summary('running'))).toBe(true);
    expect(summaryTrails({ state: 'running' }, null)).toBe(true);
    expect(summaryTrails({ state: 'running' }, summary('running'))).toBe(false);
  });

  it('trails while a waiting run does not yet say what it waits on', () => {
    expect(summaryTrails({ state: 'waiting' }, summary('waiting'))).toBe(true);
    expect(summaryTrails({ state: 'waiting' }, summary('waiting', { waitingOn: { reason: 'approval', attentionId: 'att1' } }))).toBe(false);
  });

  it('trails while an ended run has no end time, and never without a run', () => {
    expect(summaryTrails({ state: 'succeeded' }, summary('succeeded'))).toBe(true);
    expect(summaryTrails({ state: 'succeeded' }, summary('succeeded', { endedAt: '2026-12-04T00:00:00Z' }))).toBe(false);
    expect(summaryTrails(null, null)).toBe(false);
  });
});
