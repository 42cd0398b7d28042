/** Shapes of the gateway's computer routes (ComputerViewSchema and ComputerCommands in libs/contracts computer.v1.ts). */

export type AccessLevel = 'ask' | 'allow' | 'deny';
export type ApprovalMode = 'explicit' | 'trust-workspace' | 'trust-computer';

export const ACCESS_LEVELS: readonly AccessLevel[] = ['ask', 'allow', 'deny'];
export const APPROVAL_MODES: readonly ApprovalMode[] = ['explicit', 'trust-workspace', 'trust-computer'];

export interface ComputerPolicy {
  network: AccessLevel;
  write: AccessLevel;
  shell: AccessLevel;
  secrets: 'allow' | 'deny';
  approval: ApprovalMode;
}

/** The conservative values the server fills in for an axis left out. */
export const CONSERVATIVE_POLICY: Readonly<ComputerPolicy> = { network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit' };

export interface ComputerStatus {
  /** online | offline | unknown; a state the console does not know is shown as sent. */
  state: string;
  observedAt: string | null;
  ageMs: number | null;
  staleAfterMs: number;
  detail: string;
  hostKey: { state: 'pinned' | 'changed' | 'not_applicable'; presented: string | null; at: string | null };
}

export interface ComputerView {
  workspaceId: string;
  name: string;
  kind: 'local' | 'ssh';
  description: string;
  ssh: { host: string; port: number; user: string; hostKeys: string[]; keyCredential: string } | null;
  roots: string[];
  policy: ComputerPolicy;
  capabilities: { os: string; arch: string; cpus: number; tools: string[] } | null;
  version: number;
  createdBy: { kind: string; id: string };
  createdAt: string;
  updatedAt: string;
  status: ComputerStatus;
}

export function computersBase(workspaceId: string | null): string {
  return `/api/v1/workspaces/${workspaceId}/computers`;
}

export function computerPath(workspaceId: string | null, name: string): string {
  return `${computersBase(workspaceId)}/${encodeURIComponent(name)}`;
}
