import type { ProblemIssue } from '../../shared/problem';
import type { MissingItem, MissingKind } from './studio.api';

export interface MissingGroup {
  kind: MissingKind;
  heading: string;
  items: MissingItem[];
}

const ORDER: readonly MissingKind[] = ['credential', 'provider', 'tool', 'computer'];
const HEADINGS: Record<MissingKind, string> = {
  credential: 'Credentials',
  provider: 'Model providers',
  tool: 'Tools',
  computer: 'Computers',
};

/** Missing items by kind, credentials first (the ones a person can add from the console), each kind once. */
export function groupMissing(missing: readonly MissingItem[]): MissingGroup[] {
  return ORDER.map((kind) => ({ kind, heading: HEADINGS[kind], items: missing.filter((item) => item.kind === kind) })).filter((group) => group.items.length > 0);
}

const KIND_OF_PATH: Record<string, MissingKind> = { credentials: 'credential', providers: 'provider', tools: 'tool', computers: 'computer' };

/**
 * The missing items of a `deployment_not_ready` refusal, whose errors name each as
 * `<kind>s.<name>` (a provider name may hold dots or colons: `providers.preset:default`).
 * An issue at another path is kept under its path, as a tool, so nothing the server said is dropped.
 */
export function missingFromRefusal(errors: readonly ProblemIssue[]): MissingItem[] {
  return errors.map((issue) => {
    const dot = issue.path.indexOf('.');
    const kind = dot > 0 ? KIND_OF_PATH[issue.path.slice(0, dot)] : undefined;
    return kind ? { kind, name: issue.path.slice(dot + 1), reason: issue.message } : { kind: 'tool', name: issue.path || '(definition)', reason: issue.message };
  });
}

/** "Ready to run here", or how many things are missing, for a badge: undefined while it is checked, null when it could not be. */
export function readinessLabel(readiness: { ready: boolean; missing: readonly unknown[] } | null | undefined): { text: string; tone: 'ok' | 'warn' | 'neutral' } {
  if (readiness === undefined) return { text: 'Checking readiness…', tone: 'neutral' };
  if (readiness === null) return { text: 'Readiness not known', tone: 'neutral' };
  if (readiness.ready) return { text: 'Ready to run here', tone: 'ok' };
  const count = readiness.missing.length;
  return { text: `Needs ${count} thing${count === 1 ? '' : 's'}`, tone: 'warn' };
}
