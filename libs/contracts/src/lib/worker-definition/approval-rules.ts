import { z } from 'zod';
import { ROLES, roleRank, type Role } from '../identity/roles';
import { ApprovalSchema, duplicates, isPlainObject, parseWith, strict } from './schema-kit';

// A grant's approval: a mode ('never' | 'first_use' | 'always'), or rules around a mode.

export type Approval = 'never' | 'first_use' | 'always';
/** From weakest to strictest. */
export const APPROVAL_STRICTNESS: readonly Approval[] = ['never', 'first_use', 'always'];

/** `<n>s`, `<n>m`, `<n>h` or `<n>d`: a whole number of one unit, no sign, no leading zero, no spaces. */
export const DURATION_PATTERN = /^([1-9][0-9]{0,6})([smhd])$/;
export const MAX_DURATION_SECONDS = 30 * 86_400;
const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;
export const MAX_QUORUM = 10;
export const MAX_APPROVERS = 50;

export interface ApprovalRules {
  mode: Exclude<Approval, 'never'>;
  /** How long the attention stays open; the service's default when absent. */
  deadline?: string;
  remindAfter?: string;
  escalate?: { after: string; to: string };
  /** Distinct approvers needed; 1 when absent. */
  quorum?: number;
  /** A workspace role approvers hold at least, or the user ids and emails (lower case) that may approve. */
  approvers?: Role | string[];
}

/** As written: a plain mode stays a string, so every definition written before rules keeps its digest. */
export type ApprovalSpec = Approval | ApprovalRules;

/** Seconds of a duration in the grammar above, or null when it is not one (or exceeds 30 days). */
export function durationSeconds(value: string): number | null {
  const match = DURATION_PATTERN.exec(value);
  if (!match) return null;
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
  return seconds <= MAX_DURATION_SECONDS ? seconds : null;
}

const Duration = z.string().refine((value) => durationSeconds(value) !== null, {
  error: 'a duration is a whole number and one unit, s, m, h or d ("30s", "15m", "2h", "1d"), at most 30 days',
});

const Approver = z.string().min(1).max(254).regex(/^[^\s]+$/, { error: 'a user id or email has no spaces' });

const ApprovalRulesSchema = strict({
  mode: z.enum(['first_use', 'always']),
  deadline: Duration.optional(),
  remindAfter: Duration.optional(),
  escalate: strict({ after: Duration, to: z.string().min(1).max(41) }).optional(),
  quorum: z.number().int().min(1).max(MAX_QUORUM).optional(),
  approvers: z.union([z.enum(ROLES), z.array(Approver).min(1).max(MAX_APPROVERS)]).optional(),
})
  .transform((rules) => ({ ...rules, ...(Array.isArray(rules.approvers) ? { approvers: rules.approvers.map((who) => (who.includes('@') ? who.toLowerCase() : who)) } : {}) }))
  .superRefine((rules, ctx) => {
    const deadline = rules.deadline === undefined ? null : durationSeconds(rules.deadline);
    const before = (path: PropertyKey[], value: string | undefined) => {
      const seconds = value === undefined ? null : durationSeconds(value);
      if (deadline !== null && seconds !== null && seconds >= deadline) ctx.addIssue({ code: 'custom', path, message: `must be before the deadline (${rules.deadline})` });
    };
    before(['remindAfter'], rules.remindAfter);
    before(['escalate', 'after'], rules.escalate?.after);
    if (Array.isArray(rules.approvers)) {
      for (const dup of duplicates(rules.approvers)) ctx.addIssue({ code: 'custom', path: ['approvers', dup.index], message: `duplicate approver "${dup.value}"` });
      if ((rules.quorum ?? 1) > rules.approvers.length) ctx.addIssue({ code: 'custom', path: ['quorum'], message: `needs ${rules.quorum} approvers; the list names ${rules.approvers.length}` });
    }
  }) as unknown as z.ZodType<ApprovalRules>;

/** A mode, or rules: told apart by the value's type, so each is worded by its own schema (not a union's "no variant matched"). */
export const ApprovalSpecSchema: z.ZodType<ApprovalSpec> = z
  .unknown()
  .transform((value, ctx): ApprovalSpec => (isPlainObject(value) ? parseWith(ApprovalRulesSchema, value, ctx) : parseWith(ApprovalSchema, value, ctx))) as unknown as z.ZodType<ApprovalSpec>;

export function approvalMode(spec: ApprovalSpec): Approval {
  return typeof spec === 'string' ? spec : spec.mode;
}

/** The rules of a grant's approval; null for a plain mode. */
export function approvalRules(spec: ApprovalSpec): ApprovalRules | null {
  return typeof spec === 'string' ? null : spec;
}

/** Whether a person with this role or identity may answer under `rules` (fail closed: nothing known is no one). */
export function approverAllowed(rules: Pick<ApprovalRules, 'approvers'> | null, who: { id: string; role?: Role | undefined; email?: string | undefined }): boolean {
  const approvers = rules?.approvers;
  if (approvers === undefined) return true;
  if (typeof approvers === 'string') return who.role !== undefined && roleRank(who.role) >= roleRank(approvers);
  return approvers.includes(who.id) || (who.email !== undefined && approvers.includes(who.email.toLowerCase()));
}

/**
 * An override's approval against the version's: it may only ask at least as much. Its mode is at
 * least the version's; when the version sets rules, their deadline is the same or shorter, the
 * quorum the same or larger, and the approvers the same or fewer (a higher role, or a sub-list).
 * A plain mode keeps the version's rules. Reminders and escalations decide who is told, not who
 * may allow, so an override sets them freely.
 */
export function narrowApproval(version: ApprovalSpec, override: ApprovalSpec): { approval: ApprovalSpec; problems: Array<{ path: string; message: string }> } {
  const problems: Array<{ path: string; message: string }> = [];
  const mode = approvalMode(override);
  if (APPROVAL_STRICTNESS.indexOf(mode) < APPROVAL_STRICTNESS.indexOf(approvalMode(version))) {
    problems.push({ path: typeof override === 'string' ? '' : '.mode', message: `"${mode}" is weaker than the version's "${approvalMode(version)}"` });
  }
  const base = approvalRules(version);
  const given = approvalRules(override);
  if (!base) return { approval: override, problems };
  if (!given) return { approval: mode === 'never' ? override : { ...base, mode }, problems };
  const baseDeadline = base.deadline === undefined ? null : durationSeconds(base.deadline);
  const givenDeadline = given.deadline === undefined ? null : durationSeconds(given.deadline);
  if (baseDeadline !== null && (givenDeadline === null || givenDeadline > baseDeadline)) problems.push({ path: '.deadline', message: `must be at most the version's ${base.deadline}` });
  if ((given.quorum ?? 1) < (base.quorum ?? 1)) problems.push({ path: '.quorum', message: `must be at least the version's ${base.quorum}` });
  if (!approversWithin(given.approvers, base.approvers)) problems.push({ path: '.approvers', message: 'must be the version\'s approvers or fewer (a higher role, or some of its list)' });
  return { approval: given, problems };
}

function approversWithin(given: ApprovalRules['approvers'], base: ApprovalRules['approvers']): boolean {
  if (base === undefined) return true;
  if (given === undefined) return false;
  if (typeof base === 'string') return typeof given === 'string' ? roleRank(given) >= roleRank(base) : false;
  return Array.isArray(given) && given.every((who) => base.includes(who));
}

/** An escalation names a notification route of the same definition by its `name`. */
export function escalationIssues(
  tools: ReadonlyArray<{ approval: ApprovalSpec }>,
  routes: ReadonlyArray<{ name?: string | undefined }>,
): Array<{ path: PropertyKey[]; message: string }> {
  const named = routes.flatMap((route) => (route.name === undefined ? [] : [route.name]));
  return tools.flatMap((grant, index) => {
    const to = approvalRules(grant.approval)?.escalate?.to;
    if (to === undefined || named.includes(to)) return [];
    return [{ path: [index, 'approval', 'escalate', 'to'], message: `no notification route is named "${to}" (named: ${named.join(', ') || 'none'})` }];
  });
}
