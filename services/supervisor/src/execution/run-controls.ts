import type { DecodedEvent, IntakeEventData } from '@packetagent/contracts';
import type { RunEmit } from '../run/run.intent';
import type { RunAggregate } from '../run/run.state';

type Actor = { kind: string; id: string };

/**
 * Operator requests from the run's control stream, as the events the supervisor folds into the
 * run's own stream: each once (by its position there), with who asked. A request that changes
 * nothing (a pause of a paused run) is still recorded: the person asked, and the record says so.
 */
export function controlEvents(state: RunAggregate, controls: readonly DecodedEvent[]): RunEmit[] {
  const events: RunEmit[] = [];
  for (const control of controls) {
    if (control.streamVersion <= state.controlVersion) continue;
    const folded = { controlVersion: control.streamVersion, ...(control.actor ? { requestedBy: actorOf(control.actor) } : {}) };
    switch (control.type) {
      case 'run.stop_requested':
        events.push({ type: 'run.stop_requested', data: { reason: (control.data as IntakeEventData<'run.stop_requested'>).reason, ...folded } });
        break;
      case 'run.pause_requested':
        events.push({ type: 'run.pause_requested', data: { reason: (control.data as IntakeEventData<'run.pause_requested'>).reason, ...folded } });
        break;
      case 'run.resume_requested':
        events.push({ type: 'run.resume_requested', data: { ...folded } });
        break;
      case 'run.revoke_requested':
        events.push({ type: 'run.revoke_requested', data: { reason: (control.data as IntakeEventData<'run.revoke_requested'>).reason, ...folded } });
        break;
      default:
        // Not a request the run knows; it stays in the control stream for the record.
        break;
    }
  }
  return events;
}

function actorOf(actor: unknown): Actor {
  const { kind, id } = actor as Actor;
  return { kind: String(kind), id: String(id) };
}
