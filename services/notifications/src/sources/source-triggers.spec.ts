import type { NotificationRoute } from '@packetagent/contracts';
import { matchRoutes, triggersOf } from './source-triggers';

const routes: NotificationRoute[] = [
  { name: 'ops', on: ['attention', 'failed', 'any_terminal'], channel: 'webhook', credential: 'hook' },
  { name: 'lead', on: ['any_terminal'], channel: 'email', to: 'lead@example.com' },
  { on: ['progress', 'succeeded'], channel: 'slack', credential: 'slack', to: '#runs' },
];

describe('which routes an event reaches', () => {
  it('sends a failure once per route, under the most specific event the route listens to', () => {
    expect(matchRoutes(routes, 'run.timed_out').map(({ index, trigger }) => [index, trigger])).toEqual([
      [0, 'failed'],
      [1, 'any_terminal'],
    ]);
  });

  it('sends a success to routes of succeeded or any_terminal only', () => {
    expect(matchRoutes(routes, 'run.succeeded').map(({ index, trigger }) => [index, trigger])).toEqual([
      [0, 'any_terminal'],
      [1, 'any_terminal'],
      [2, 'succeeded'],
    ]);
  });

  it('sends an escalation to the route it names, and to no route when none has that name', () => {
    expect(matchRoutes(routes, 'attention.escalated', 'lead').map(({ index, trigger }) => [index, trigger])).toEqual([[1, 'escalation']]);
    expect(matchRoutes(routes, 'attention.escalated', 'nobody')).toEqual([]);
  });

  it('knows nothing of events no route listens to', () => {
    expect(triggersOf('run.model_turn')).toEqual([]);
    expect(matchRoutes(routes, 'run.claimed')).toEqual([]);
  });

  it('maps checkpoints to progress and cancellations to any_terminal only', () => {
    expect(triggersOf('run.checkpoint')).toEqual(['progress']);
    expect(triggersOf('run.cancelled')).toEqual(['any_terminal']);
  });
});
