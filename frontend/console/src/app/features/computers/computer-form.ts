import { CONSERVATIVE_POLICY, type ComputerPolicy } from './computers.api';

/** What the register form holds; roots and host keys are one a line. */
export interface ComputerForm {
  name: string;
  kind: 'ssh' | 'local';
  host: string;
  port: number | null;
  user: string;
  keyCredential: string;
  roots: string;
  hostKeys: string;
  description: string;
  policy: ComputerPolicy;
}

export function emptyComputerForm(): ComputerForm {
  return { name: '', kind: 'ssh', host: '', port: null, user: '', keyCredential: '', roots: '', hostKeys: '', description: '', policy: { ...CONSERVATIVE_POLICY } };
}

/** A host key the server showed and the operator has not confirmed yet, for the host and port it came from. */
export interface PendingHostKey {
  name: string;
  host: string;
  port: number;
  presented: string;
}

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/**
 * The PUT body: the spec as the form has it (every policy axis, so what is sent is what was seen),
 * and `acceptHostKey` only when the operator confirmed that very key.
 */
export function registrationBody(form: ComputerForm, acceptHostKey: string | null = null): Record<string, unknown> {
  const common = { ...(form.description.trim() ? { description: form.description.trim() } : {}), policy: { ...form.policy } };
  if (form.kind === 'local') return { kind: 'local', ...common };
  const hostKeys = lines(form.hostKeys);
  return {
    kind: 'ssh',
    ...common,
    ssh: { host: form.host.trim(), ...(form.port ? { port: form.port } : {}), user: form.user.trim(), keyCredential: form.keyCredential.trim(), ...(hostKeys.length ? { hostKeys } : {}) },
    roots: lines(form.roots),
    ...(acceptHostKey ? { acceptHostKey } : {}),
  };
}

/** A confirmation holds only for the computer, host and port whose key was shown: edit any of them and it must be shown again. */
export function confirmationHolds(pending: PendingHostKey | null, form: ComputerForm): pending is PendingHostKey {
  return pending !== null && form.kind === 'ssh' && pending.name === form.name.trim() && pending.host === form.host.trim() && pending.port === (form.port || 22);
}

/** Commands that print a host's key fingerprint, for checking the one shown against. */
export function verifyCommands(host: string, port: number): { onHost: string; fromHere: string } {
  return { onHost: 'ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub', fromHere: `ssh-keyscan${port === 22 ? '' : ` -p ${port}`} ${host} | ssh-keygen -lf -` };
}
