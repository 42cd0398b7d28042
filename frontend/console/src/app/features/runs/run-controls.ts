import { budgetRequestOf, type Attention } from '../approvals/attention-facts';
import { formatUsd, isActiveRunState } from '../../shared/format';

/** What a run waits on, as the run summary carries it (WAIT_REASONS of libs/contracts run.events.v1.ts). */
export interface WaitingOn {
  reason: string;
  attentionId: string | null;
}

export interface RunControlState {
  state: string;
  pauseRequested: boolean;
  stopRequested: boolean;
}

export interface RunControls {
  stop: boolean;
  pause: boolean;
  resume: boolean;
}

/**
 * The controls a run's state allows, as intake and the supervisor take them: stop while it is
 * active and no stop is pending; pause while it is queued, running or waiting on something other
 * than a pause (a pause asked for during an approval wait parks the run when the wait ends, the
 * supervisor's pause outranking the work); resume only once a pause was asked for, since intake
 * records nothing for a run that is not paused.
 */
export function runControls(run: RunControlState, waitingOn: WaitingOn | null): RunControls {
  if (!isActiveRunState(run.state)) return { stop: false, pause: false, resume: false };
  const paused = run.pauseRequested || waitingOn?.reason === 'paused';
  return { stop: !run.stopRequested, pause: !paused && !run.stopRequested, resume: paused && !run.stopRequested };
}

/** "approval of slack_post POST on #ops", "an answer to its question", ...: what a waiting run waits on, in words. */
export function describeWait(waitingOn: WaitingOn, attention: Attention | null): string {
  switch (waitingOn.reason) {
    case 'approval':
      if (!attention) return 'an approval';
      return `approval of ${attention.tool}${attention.verb ? ` ${attention.verb}` : ''}${attention.resource ? ` on ${attention.resource}` : ''}`;
    case 'budget': {
      const request = attention ? budgetRequestOf(attention.arguments) : null;
      return request ? `a budget request for ${formatUsd(request.requestedUsd)} more` : 'a budget request';
    }
    case 'question':
      return 'an answer to its question';
    case 'paused':
      return 'an operator to resume it (paused)';
    case 'reconnect':
      return 'a tool connection to be reconnected';
    default:
      return waitingOn.reason.replaceAll('_', ' ');
  }
}

/** The wait is answered on the Approvals page (and inline on the run page). */
export function isAnswerable(waitingOn: WaitingOn | null): boolean {
  return waitingOn !== null && waitingOn.attentionId !== null && (waitingOn.reason === 'approval' || waitingOn.reason === 'budget' || waitingOn.reason === 'question');
}

/**
 * Whether the read model's summary trails the run as intake reports it: another state, a waiting
 * run whose summary does not yet say what it waits on, or an ended run without its end time.
 */
export function summaryTrails(run: { state: string } | null | undefined, summary: { state: string; waitingOn: WaitingOn | null; endedAt: string | null } | null | undefined): boolean {
  if (!run) return false;
  if (!summary) return true;
  if (summary.state !== run.state) return true;
  if (run.state === 'waiting') return summary.waitingOn === null;
  return !isActiveRunState(run.state) && summary.endedAt === null;
}
