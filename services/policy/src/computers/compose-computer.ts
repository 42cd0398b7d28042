import { commandRequirement, ComputerPolicySchema, CredentialNameSchema, type ApprovalMode, type ComputerView, type DecisionReasonCode } from '@packetagent/contracts';

/** The record of a computer as policy read it from its owner, or why it could not. */
export type ComputerLookup =
  | { ok: true; view: ComputerView }
  | { ok: false; reason: 'not_found' | 'unanswered' | 'unreadable'; text: string };

export type ComputerCheck =
  | { ok: false; code: DecisionReasonCode; text: string }
  | {
      ok: true;
      name: string;
      /** What the computer's policy asks of a command on it ('ask' already read as 'allow' under trust-computer). */
      requirement: 'allow' | 'ask';
      approval: ApprovalMode;
      /** The vault credential holding its key; null for a `local` computer, which has none. */
      keyCredential: string | null;
    };

const AXES = ['shell', 'write', 'network'] as const;

/**
 * What a call on a registered computer must also satisfy, after its grant allowed it: the record
 * must be readable, the computer's policy must not deny commands, and credentials go to it only
 * when its policy allows secrets. Texts name the computer, never a secret.
 */
export function composeComputer(lookup: ComputerLookup, call: { credentials: readonly string[] }): ComputerCheck {
  if (!lookup.ok) return { ok: false, code: 'computer_unavailable', text: lookup.text };
  const { view } = lookup;
  // Read again with the conservative defaults: a value this build does not know never trusts more.
  const policy = ComputerPolicySchema.parse(view.policy);
  const requirement = commandRequirement(policy);
  if (requirement === 'deny') {
    const denying = AXES.filter((axis) => policy[axis] === 'deny').map((axis) => `${axis}: deny`);
    return { ok: false, code: 'computer_policy_denied', text: `computer "${view.name}" lets no command run (its policy says ${denying.join(', ')})` };
  }
  if (call.credentials.length > 0 && policy.secrets !== 'allow') {
    return { ok: false, code: 'computer_secrets_denied', text: `computer "${view.name}" takes no secrets (its policy says secrets: ${policy.secrets})` };
  }
  let keyCredential: string | null = null;
  if (view.kind === 'ssh') {
    const key = CredentialNameSchema.safeParse(view.ssh?.keyCredential);
    if (!key.success) return { ok: false, code: 'computer_unavailable', text: `the record of computer "${view.name}" names no usable key` };
    keyCredential = key.data;
  }
  return { ok: true, name: view.name, requirement, approval: policy.approval, keyCredential };
}
