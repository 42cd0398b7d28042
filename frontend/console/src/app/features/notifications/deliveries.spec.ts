import { deliveriesQuery, deliveryProgress, deliveryStateOf, deliveryTone, routeLabel, routeName, waitText, withDelivery, type Delivery, type DeliveryRoute } from './deliveries';

const SLACK: DeliveryRoute = { index: 0, name: 'ops', channel: 'slack', credential: 'slack_bot', to: '#releases', role: 'member' };
const HOOK: DeliveryRoute = { index: 2, name: null, channel: 'webhook', credential: 'hook', to: null, role: 'member' };

function delivery(fields: Partial<Delivery> = {}): Delivery {
  return {
    deliveryId: '0190d6a2-0000-7000-8000-000000000001',
    workspaceId: 'ws_1',
    idempotencyKey: 'evt-1:0',
    trigger: 'attention',
    route: SLACK,
    state: 'pending',
    runId: 'run-1',
    deploymentId: 'dep-1',
    attentionId: 'att-1',
    sourceEventId: 'evt-1',
    attempts: 0,
    attemptLog: [],
    nextAttemptAt: null,
    expiresAt: '2026-03-02T12:00:00.000Z',
    deliveredAt: null,
    lastError: null,
    createdAt: '2026-03-01T12:00:00.000Z',
    ...fields,
  };
}

describe(deliveriesQuery.name, () => {
  it('asks for a page of every state and run when nothing is filtered', () => {
    expect(deliveriesQuery({ state: '', runId: ' ' }, null)).toBe('limit=50');
  });

  it('asks for one state and run, after the last delivery shown', () => {
    expect(deliveriesQuery({ state: 'dead', runId: ' run-1 ' }, '0190d6a2-0000-7000-8000-000000000001')).toBe('limit=50&state=dead&runId=run-1&after=0190d6a2-0000-7000-8000-000000000001');
  });
});

describe(deliveryStateOf.name, () => {
  it('keeps a state the outbox knows and reads anything else as every state', () => {
    expect(deliveryStateOf('dead')).toBe('dead');
    expect(deliveryStateOf('gone')).toBe('');
    expect(deliveryStateOf(undefined)).toBe('');
  });
});

describe(deliveryTone.name, () => {
  it('colours delivered as ok, dead as bad, pending as a warning and an unknown state as neutral', () => {
    expect(['delivered', 'dead', 'pending', 'parked'].map(deliveryTone)).toEqual(['ok', 'bad', 'warn', 'neutral']);
  });
});

describe(routeLabel.name, () => {
  it('names a route by its name, or its position when it has none, and where it goes', () => {
    expect(routeName(SLACK)).toBe('ops');
    expect(routeName(HOOK)).toBe('#2');
    expect(routeLabel(SLACK)).toBe('slack ops → #releases');
    expect(routeLabel(HOOK)).toBe('webhook #2');
  });
});

describe(waitText.name, () => {
  it('says how long an attempt waited, in a unit that fits', () => {
    expect(waitText(null)).toBe('first attempt');
    expect(waitText(350)).toBe('350 ms');
    expect(waitText(1_234)).toBe('1.2 s');
    expect(waitText(600_000)).toBe('10 min');
    expect(waitText(9_000_000)).toBe('2.5 h');
  });
});

describe(deliveryProgress.name, () => {
  const failed = { afterMs: null, outcome: 'failed', status: 503, code: 'http_503', message: 'the receiver answered 503' } as const;

  it('tells when a delivery was delivered, or when it is tried next', () => {
    expect(deliveryProgress(delivery({ state: 'delivered', deliveredAt: '2026-03-01T12:00:01.000Z' }))).toEqual({ label: 'Delivered', at: '2026-03-01T12:00:01.000Z' });
    expect(deliveryProgress(delivery({ nextAttemptAt: '2026-03-01T12:05:00.000Z' }))).toEqual({ label: 'Next attempt', at: '2026-03-01T12:05:00.000Z' });
    expect(deliveryProgress(delivery())).toEqual({ label: 'Due', at: null });
  });

  it('tells when a dead delivery was last tried', () => {
    const attemptLog = [{ ...failed, at: '2026-03-01T12:00:01.000Z' }, { ...failed, at: '2026-03-01T13:00:00.000Z', afterMs: 3_599_000 }];

    expect(deliveryProgress(delivery({ state: 'dead', attempts: 2, attemptLog }))).toEqual({ label: 'Gave up', at: '2026-03-01T13:00:00.000Z' });
  });
});

describe(withDelivery.name, () => {
  it("replaces the redriven delivery in place and keeps the page's cursor and the other rows", () => {
    const dead = delivery({ state: 'dead', attempts: 5 });
    const other = delivery({ deliveryId: '0190d6a2-0000-7000-8000-000000000000', state: 'delivered' });
    const redriven = { ...dead, state: 'pending' as const, nextAttemptAt: '2026-03-01T14:00:00.000Z' };

    const sut = withDelivery({ items: [dead, other], next: 'cursor-1' }, redriven);

    expect(sut).toEqual({ items: [redriven, other], next: 'cursor-1' });
  });
});
