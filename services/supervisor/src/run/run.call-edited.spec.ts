import type { AuthorizeResult } from '@packetagent/contracts';
import { at, checkpoint, decided, modelTurn, pinnedRun, postCall, running, stateOf, waitingFor, type Given } from '../testing/run-scenario';
import { afterDecision, decide } from './run.decider';
import type { RunIntent } from './run.intent';

const editor = { kind: 'user', id: 'u-ops' } as const;
const editedArgs = { channel: '#releases', text: 'Evidence for item 3 attached', credential: 'slack_release_channel' };

function act(intent: RunIntent) {
  if (intent.kind !== 'act') throw new Error(`expected act, got ${intent.kind}`);
  return intent;
}

const waitingRun: Array<Given | Given[]> = [running(), modelTurn(1, [postCall('c2')]), checkpoint('plan'), decided('c2', 'slack_post', 'approval_required', 'att1'), waitingFor('c2', 'att1')];

/** Policy's answer for the original call once the person approved an edit of it. */
function approvedWithEdit(originalDigest: string, editedDigest: string): AuthorizeResult {
  return {
    decision: 'deny',
    reason: { code: 'approval_edited', text: 'the edited call runs instead' },
    approvalId: 'att1',
    edit: { attentionId: 'att1', originalDigest, editedDigest, arguments: editedArgs, editor },
  };
}

describe('run decider: an approval with edited arguments', () => {
  const pinned = pinnedRun();
  const editedDigest = pinned.plan('c2', 'slack_post', editedArgs).callDigest;

  it('records the edit in the run, still waiting, when policy answers the original call with it', () => {
    const intent = act(decide(stateOf(...waitingRun), pinned, at(1)));
    const outcome = afterDecision(stateOf(...waitingRun), intent.call, intent.planned, approvedWithEdit(intent.planned.callDigest, editedDigest), null);
    expect(outcome).toEqual({
      kind: 'record',
      events: [
        expect.objectContaining({ type: 'run.tool_decided', data: expect.objectContaining({ decision: 'deny', reason: expect.objectContaining({ code: 'approval_edited' }) }) }),
        { type: 'run.call_edited', data: { callId: 'c2', attentionId: 'att1', originalDigest: intent.planned.callDigest, editedDigest, arguments: editedArgs, editor } },
      ],
    });
  });

  it('acts on the edited call after the edit, so replay and recovery run the edit, not the original', () => {
    const original = act(decide(stateOf(...waitingRun), pinned, at(1))).planned.callDigest;
    const edited: Given = { type: 'run.call_edited', data: { callId: 'c2', attentionId: 'att1', originalDigest: original, editedDigest, arguments: editedArgs, editor } };
    const state = stateOf(...waitingRun, edited);
    const intent = act(decide(state, pinned, at(2)));
    expect(intent.planned).toMatchObject({ callDigest: editedDigest, args: editedArgs });
    expect(state).toMatchObject({ status: 'waiting', pending: [{ callId: 'c2', arguments: editedArgs, edit: { attentionId: 'att1', originalDigest: original, editedDigest } }] });
    const allowed: AuthorizeResult = { decision: 'allow', reason: { code: 'approved_once', text: 'approved' }, approvalId: 'att1' };
    expect(afterDecision(state, intent.call, intent.planned, allowed, null)).toMatchObject({ kind: 'execute', events: [{ type: 'run.resumed' }, { type: 'run.tool_decided', data: { callDigest: editedDigest } }] });
  });

  it('does not take a second edit of an edited call: it is a denial the model is told of', () => {
    const original = act(decide(stateOf(...waitingRun), pinned, at(1))).planned.callDigest;
    const edited: Given = { type: 'run.call_edited', data: { callId: 'c2', attentionId: 'att1', originalDigest: original, editedDigest, arguments: editedArgs, editor } };
    const state = stateOf(...waitingRun, edited);
    const intent = act(decide(state, pinned, at(2)));
    expect(afterDecision(state, intent.call, intent.planned, approvedWithEdit(editedDigest, 'f'.repeat(64)), null)).toMatchObject({
      kind: 'record',
      events: [{ type: 'run.resumed' }, { type: 'run.tool_decided' }, { type: 'run.tool_result', data: { ok: false, summary: 'denied: approval_edited' } }],
    });
  });

  it('refuses to run an edit that plans to another call than the one approved', () => {
    const edited: Given = { type: 'run.call_edited', data: { callId: 'c2', attentionId: 'att1', originalDigest: 'a'.repeat(64), editedDigest: 'b'.repeat(64), arguments: editedArgs, editor } };
    expect(decide(stateOf(...waitingRun, edited), pinned, at(2))).toMatchObject({ kind: 'record', events: [{ type: 'run.tool_result', data: { ok: false, executed: false, summary: 'edited call does not match its approval' } }] });
  });
});
