import type { TriggerBinding } from '@packetagent/contracts';
import { alertDedupeKey, alertMatches, AlertmanagerPayloadSchema } from './alertmanager';
import { alertmanagerSample } from './alertmanager-sample.testkit';

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
