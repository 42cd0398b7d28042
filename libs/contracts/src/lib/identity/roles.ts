import { z } from 'zod';

/** Workspace roles, from least to most privileged; the order is the role ceiling's order. */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
export const RoleSchema = z.enum(ROLES);

/**
 * `run-recovery` releases or ends a quarantined run: it overrides the supervisor's refusal to
 * replay a history it could not verify, so it sits with the roles that may deploy, not with
 * `run-control`. `sandbox-exec` runs a command of one's own choosing in the sandbox (or in a
 * run's workspace) and cancels one: it is not a grant of any worker, so it sits with the same
 * roles, not with `run-control`. `computer-manage` registers, changes, probes and removes the
 * computers commands run on (their hosts, roots, policy and pinned host keys): it changes where
 * and how far commands reach, so it sits with the roles that change the workspace's
 * infrastructure; every role may read them (`inspect`).
 */
export const PERMISSIONS = ['inspect', 'author', 'deploy', 'deployment-control', 'run-control', 'run-recovery', 'sandbox-exec', 'computer-manage', 'approve', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];
export const PermissionSchema = z.enum(PERMISSIONS);

/**
 * What each role may do. Admin and owner hold every permission; what only an owner can do is
 * grant the owner role (see `roleWithin`), so the table stays one list per role.
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  viewer: ['inspect'],
  member: ['inspect', 'author', 'run-control'],
  admin: PERMISSIONS,
  owner: PERMISSIONS,
};

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

export function roleHasPermission(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}

/** Whether `role` may be granted by someone holding `ceiling` (never above one's own role). */
export function roleWithin(role: Role, ceiling: Role): boolean {
  return roleRank(role) <= roleRank(ceiling);
}
