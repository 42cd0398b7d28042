import type { TriggerBinding } from '@packetagent/contracts';
import { alertDedupeKey, alertMatches, AlertmanagerPayloadSchema } from './alertmanager';

/** A payload as Alertmanager 0.27 sends it to a webhook receiver. */
export const alertmanagerSample = {
  receiver: 'packetagent',
  status: 'firing',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'HighErrorRate', service: 'checkout', severity: 'page' },
      annotations: { summary: 'Error rate above 5%' },
      startsAt: '2026-11-30T08:00:00.000Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=...',
      fingerprint: 'c3f1a1b2d4e5f601',
    },
    {
      status: 'firing',
      labels: { alertname: 'DiskFull', service: 'db', severity: 'ticket' },
      annotations: {},
      startsAt: '2026-11-30T08:01:00.000Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=...',
      fingerprint: 'aa00bb11cc22dd33',
    },
  ],
  groupLabels: { alertname: 'HighErrorRate' },
  commonLabels: {},
  commonAnnotations: {},
  externalURL: 'http://alertmanager:9093',
  version: '4',
  groupKey: '{}:{alertname="HighErrorRate"}',
  truncatedAlerts: 0,
};

const binding = (alert: TriggerBinding['alert']): TriggerBinding => ({ triggerId: 't', key: 'alert-0', kind: 'alert', alert });

describe('AlertmanagerPayloadSchema', () => {
  it('accepts the payload Alertmanager sends, unchanged', () => {
    const sut = AlertmanagerPayloadSchema.parse(alertmanagerSample);
    expect(sut.alerts).toHaveLength(2);
    expect(sut.alerts[0]!.labels['alertname']).toBe('HighErrorRate');
  });

  it('refuses another payload version with a message naming the supported one', () => {
    const result = AlertmanagerPayloadSchema.safeParse({ ...alertmanagerSample, version: '3' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.message).toBe('only Alertmanager webhook payload version "4" is supported');
  });
});

describe(alertMatches.name, () => {
  const [errors, disk] = AlertmanagerPayloadSchema.parse(alertmanagerSample).alerts as [never, never];

  it('matches by alert name', () => {
    expect(alertMatches(binding({ names: ['HighErrorRate'], labels: {}, on: ['firing'] }), errors)).toBe(true);
    expect(alertMatches(binding({ names: ['HighErrorRate'], labels: {}, on: ['firing'] }), disk)).toBe(false);
  });

  it('matches by labels, all of them', () => {
    expect(alertMatches(binding({ names: [], labels: { severity: 'page' }, on: ['firing'] }), errors)).toBe(true);
    expect(alertMatches(binding({ names: [], labels: { severity: 'page', service: 'db' }, on: ['firing'] }), errors)).toBe(false);
  });

  it('matches only the statuses the trigger asks for', () => {
    const resolved = { ...(errors as object), status: 'resolved' } as never;
    expect(alertMatches(binding({ names: ['HighErrorRate'], labels: {}, on: ['firing'] }), resolved)).toBe(false);
    expect(alertMatches(binding({ names: ['HighErrorRate'], labels: {}, on: ['firing', 'resolved'] }), resolved)).toBe(true);
  });

  it('keys an occurrence by fingerprint, status and start, so repeated notifications dedupe', () => {
    expect(alertDedupeKey(errors)).toBe('alert:c3f1a1b2d4e5f601:firing:2026-11-30T08:00:00.000Z');
  });
});
