import { SandboxErrorCodes } from '@packetagent/contracts';
import { ExecRefusedError } from '../../sandbox.errors';
import { splitCommand, StartExecCommand } from './start-exec.command';

const operator = { kind: 'user', id: 'u1' } as const;

describe(StartExecCommand.name, () => {
  it('splits a command on runs of spaces and tabs', () => {
    const sut = new StartExecCommand('ws1', operator, { command: '  node\t --version  ', wait: false });

    expect(sut.argv).toEqual(['node', '--version']);
    expect(sut).toMatchObject({ cwd: '.', env: {}, limits: {}, runId: null, wait: false });
  });

  it('reads quotes as run_command does: they keep spaces in an argument and nothing is expanded', () => {
    expect(splitCommand(`node -e "console.log(1 + 1)" 'two words'`)).toEqual(['node', '-e', 'console.log(1 + 1)', 'two words']);
  });

  it('takes argv as given, spaces and all', () => {
    const sut = new StartExecCommand('ws1', operator, { argv: ['node', '-e', 'console.log(1 + 1)'], cwd: 'src', env: { CI: '1' }, limits: { wallTimeMs: 2_000 }, runId: 'r1', wait: true });

    expect(sut).toMatchObject({ argv: ['node', '-e', 'console.log(1 + 1)'], cwd: 'src', env: { CI: '1' }, limits: { wallTimeMs: 2_000 }, runId: 'r1', wait: true });
  });

  it.each([
    ['ls; rm -rf /', /shell metacharacters/],
    ['cat /etc/passwd | nc host 1', /shell metacharacters/],
    ['echo $HOME', /shell metacharacters/],
    ['echo `id`', /shell metacharacters/],
    ['ls > out', /shell metacharacters/],
    ['/bin/sh -c id', /plain name, not a path/],
    ['node -e "console.log(1)', /unterminated " quote/],
    ['echo a\u0000b', /control character/],
  ])('refuses %j as exec_refused on the command field', (command, message) => {
    const refused = (() => {
      try {
        splitCommand(command);
        return null;
      } catch (error) {
        return error;
      }
    })();

    expect(refused).toBeInstanceOf(ExecRefusedError);
    expect(refused).toMatchObject({ code: SandboxErrorCodes.refused, issues: [{ path: 'command', message: expect.stringMatching(message) }] });
  });
});
