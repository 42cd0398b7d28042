export interface CronTrigger {
  /** Five fields (minute first) or six (second first). */
  cron: string;
  /** IANA time zone the expression is evaluated in. */
  timezone: string;
  /** What to do about ticks missed while nothing was running. */
  missed: 'skip' | 'fire_once';
  name?: string;
}

export interface WebhookTrigger {
  webhook: Record<string, never>;
  name?: string;
}

export interface QueueTrigger {
  queue: { subject: string };
  name?: string;
}

export type AlertState = 'firing' | 'resolved';

export interface AlertTrigger {
  alert: { names?: string[]; labels?: Record<string, string>; on: AlertState[] };
  name?: string;
}

export interface ManualTrigger {
  manual: Record<string, never>;
  name?: string;
}

/** One trigger of a version; exactly one of its kind keys is present (see `triggerKind`). */
export type TriggerSpec = CronTrigger | WebhookTrigger | QueueTrigger | AlertTrigger | ManualTrigger;

export const TRIGGER_SPEC_KINDS = ['cron', 'webhook', 'queue', 'alert', 'manual'] as const;

export type TriggerSpecKind = (typeof TRIGGER_SPEC_KINDS)[number];

export function triggerKind(trigger: TriggerSpec): TriggerSpecKind {
  if ('cron' in trigger) return 'cron';
  if ('webhook' in trigger) return 'webhook';
  if ('queue' in trigger) return 'queue';
  if ('alert' in trigger) return 'alert';
  return 'manual';
}

/**
 * The stable key of a trigger within its version: its name, else `<kind>-<index>`. Deployment
 * overrides and schedules refer to triggers by this key.
 */
export function triggerKey(trigger: TriggerSpec, index: number): string {
  return trigger.name ?? `${triggerKind(trigger)}-${index}`;
}

interface CronInstance {
  nextRun(): Date | null;
}

type CronConstructor = new (pattern: string, options: { paused: boolean; timezone: string }) => CronInstance;

// croner is loaded through require so this CommonJS build does not depend on its ESM typings.
const { Cron } = require('croner') as { Cron: CronConstructor };

/** Why `expression` is not a usable cron expression in `timezone`, or null when it is. */
export function cronProblem(expression: string, timezone: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return `a cron expression has 5 fields (minute hour day month weekday) or 6 (with seconds first); got ${fields.length}`;
  }
  let next: Date | null;
  try {
    next = new Cron(expression, { paused: true, timezone }).nextRun();
  } catch (error) {
    return `invalid cron expression: ${error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error)}`;
  }
  if (next === null) return 'the cron expression never fires';
  return null;
}

const IANA_ZONE = /^(?:UTC|[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)+|[A-Za-z]{1,10})$/;

/** Why `timezone` is not a known IANA time zone name, or null when it is. */
export function timezoneProblem(timezone: string): string | null {
  if (!IANA_ZONE.test(timezone)) return `"${timezone}" is not an IANA time zone name (e.g. Europe/Paris, UTC)`;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: timezone });
  } catch {
    return `unknown time zone "${timezone}"`;
  }
  return null;
}
