import { PERMISSIONS, ROLES, roleHasPermission, roleWithin, type Permission, type Role } from './roles';

describe('roles', () => {
  const granted = (role: Role) => PERMISSIONS.filter((permission: Permission) => roleHasPermission(role, permission));

  it('gives a viewer inspect only', () => {
    expect(granted('viewer')).toEqual(['inspect']);
  });

  it('gives a member inspect, author and run-control', () => {
    expect(granted('member')).toEqual(['inspect', 'author', 'run-control']);
  });

  it('keeps run-recovery (release or end a quarantined run) from viewer and member', () => {
    expect(roleHasPermission('viewer', 'run-recovery')).toBe(false);
    expect(roleHasPermission('member', 'run-recovery')).toBe(false);
    expect(roleHasPermission('admin', 'run-recovery')).toBe(true);
    expect(roleHasPermission('owner', 'run-recovery')).toBe(true);
  });

  it('keeps sandbox-exec (run and cancel an operator command in the sandbox) from viewer and member', () => {
    expect(roleHasPermission('viewer', 'sandbox-exec')).toBe(false);
    expect(roleHasPermission('member', 'sandbox-exec')).toBe(false);
    expect(roleHasPermission('admin', 'sandbox-exec')).toBe(true);
    expect(roleHasPermission('owner', 'sandbox-exec')).toBe(true);
  });

  it('keeps computer-manage (register, change, probe and remove computers) from viewer and member', () => {
    expect(roleHasPermission('viewer', 'computer-manage')).toBe(false);
    expect(roleHasPermission('member', 'computer-manage')).toBe(false);
    expect(roleHasPermission('admin', 'computer-manage')).toBe(true);
    expect(roleHasPermission('owner', 'computer-manage')).toBe(true);
  });

  it('gives admin and owner every permission', () => {
    expect(granted('admin')).toEqual([...PERMISSIONS]);
    expect(granted('owner')).toEqual([...PERMISSIONS]);
  });

  it('orders roles so that no role can grant one above itself', () => {
    expect(ROLES).toEqual(['viewer', 'member', 'admin', 'owner']);
    expect(roleWithin('owner', 'admin')).toBe(false);
    expect(roleWithin('admin', 'admin')).toBe(true);
    expect(roleWithin('viewer', 'member')).toBe(true);
    expect(roleWithin('member', 'viewer')).toBe(false);
  });
});
