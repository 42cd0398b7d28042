import { confirmationHolds, emptyComputerForm, registrationBody, verifyCommands, type ComputerForm } from './computer-form';

const KEY = `SHA256:${'k'.repeat(43)}`;

function form(fields: Partial<ComputerForm> = {}): ComputerForm {
  return { ...emptyComputerForm(), name: 'build-1', host: ' build-1.example.com ', user: 'deploy', keyCredential: 'build_key', roots: '/srv/app\n\n  /srv/cache \r\n', ...fields };
}

describe(registrationBody.name, () => {
  it('sends an ssh spec with its roots one a line, every policy axis, and no key to accept unless one was confirmed', () => {
    expect(registrationBody(form({ port: 2222, description: ' CI ' }))).toEqual({
      kind: 'ssh',
      description: 'CI',
      policy: { network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit' },
      ssh: { host: 'build-1.example.com', port: 2222, user: 'deploy', keyCredential: 'build_key' },
      roots: ['/srv/app', '/srv/cache'],
    });
    expect(registrationBody(form({ hostKeys: `${KEY}\n` }), KEY)).toMatchObject({ ssh: { hostKeys: [KEY] }, acceptHostKey: KEY });
  });

  it('sends a local computer without a target or roots, whatever the ssh fields still hold', () => {
    expect(registrationBody(form({ kind: 'local' }), KEY)).toEqual({ kind: 'local', policy: { network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit' } });
  });
});

describe(confirmationHolds.name, () => {
  const pending = { name: 'build-1', host: 'build-1.example.com', port: 22, presented: KEY };

  it('holds for the computer, host and port the key was shown for', () => {
    expect(confirmationHolds(pending, form())).toBe(true);
    expect(confirmationHolds(pending, form({ port: 22 }))).toBe(true);
  });

  it('stops holding when the name, host, port or kind changes, or when nothing is pending', () => {
    expect(confirmationHolds(pending, form({ name: 'build-2' }))).toBe(false);
    expect(confirmationHolds(pending, form({ host: 'elsewhere.example.com' }))).toBe(false);
    expect(confirmationHolds(pending, form({ port: 2222 }))).toBe(false);
    expect(confirmationHolds(pending, form({ kind: 'local' }))).toBe(false);
    expect(confirmationHolds(null, form())).toBe(false);
  });
});

describe(verifyCommands.name, () => {
  it('prints the fingerprint on the host, or scans it from here on the right port', () => {
    expect(verifyCommands('build-1.example.com', 22)).toEqual({ onHost: 'ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub', fromHere: 'ssh-keyscan build-1.example.com | ssh-keygen -lf -' });
    expect(verifyCommands('build-1.example.com', 2222).fromHere).toBe('ssh-keyscan -p 2222 build-1.example.com | ssh-keygen -lf -');
  });
});
