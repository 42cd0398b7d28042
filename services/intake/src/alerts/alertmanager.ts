import { z } from 'zod';
import type { TriggerBinding } from '@packetagent/contracts';

/**
 * The Alertmanager webhook payload, version 4, as Alertmanager sends it
 * (https://prometheus.io/docs/alerting/latest/configuration/#webhook_config). Unknown fields
 * are kept: a newer Alertmanager adding fields must not be refused.
 */
const labels = z.record(z.string(), z.string());

export const AlertSchema = z.looseObject({
  status: z.enum(['firing', 'resolved']),
  labels,
  annotations: labels.default({}),
  startsAt: z.string(),
  endsAt: z.string().default('0001-01-01T00:00:00Z'),
  generatorURL: z.string().default(''),
  fingerprint: z.string().min(1).max(200),
});
export type Alert = z.infer<typeof AlertSchema>;

export const AlertmanagerPayloadSchema = z.looseObject({
  version: z.literal('4', { error: 'only Alertmanager webhook payload version "4" is supported' }),
  groupKey: z.string(),
  truncatedAlerts: z.number().int().nonnegative().default(0),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string(),
  groupLabels: labels.default({}),
  commonLabels: labels.default({}),
  commonAnnotations: labels.default({}),
  externalURL: z.string().default(''),
  alerts: z.array(AlertSchema).max(1000),
});
export type AlertmanagerPayload = z.infer<typeof AlertmanagerPayloadSchema>;

/** A trigger matches an alert whose name it lists (or any, if it lists none), whose labels include all of its labels, in a status it wants. */
export function alertMatches(binding: TriggerBinding, alert: Alert): boolean {
  const spec = binding.alert;
  if (!spec) return false;
  if (!spec.on.includes(alert.status)) return false;
  const name = alert.labels['alertname'];
  if (spec.names.length > 0 && (name === undefined || !spec.names.includes(name))) return false;
  return Object.entries(spec.labels).every(([key, value]) => alert.labels[key] === value);
}

/** One activation per alert occurrence and status: Alertmanager repeats notifications, this key does not change. */
export function alertDedupeKey(alert: Alert): string {
  return `alert:${alert.fingerprint}:${alert.status}:${alert.startsAt}`;
}
