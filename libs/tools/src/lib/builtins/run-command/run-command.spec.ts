import { ToolArgumentsError } from '../../errors';
import { ToolRegistry } from '../../registry';

function refusal(args: unknown): { path: string; message: string }[] {
  try {
    new ToolRegistry().plan('call-1', 'run_command', args);
  } catch (error) {
    if (error instanceof ToolArgumentsError) return [...error.issues];
    throw error;
  }
  throw new Error('the call was planned');
}

describe('run_command arguments', () => {
  it('plans a command with its cwd, timeout, environment names and egress, redacting environment values', () => {
    const planned = new ToolRegistry().plan('call-1', 'run_command', { command: 'npm  test', cwd: 'app', timeoutSeconds: 120, env: { CI: 'true' }, egress: [{ url: 'https://downloads.example.com/x.tgz' }] });
    expect(planned).toMatchObject({ verb: 'exec', resource: 'npm test', mutating: true, idempotentByKey: false });
    expect(planned.redactedArgs).toEqual({ command: 'npm  test', cwd: 'app', timeoutSeconds: 120, env: ['CI'], egress: ['https://downloads.example.com/x.tgz'] });
  });

  it.each([
    ['a ; chain', { command: 'ls; cat /etc/passwd' }, 'command', 'shell metacharacters'],
    ['a variable', { command: 'echo $HOME' }, 'command', 'shell metacharacters'],
    ['an open quote', { command: 'node -e "oops' }, 'command', 'unterminated " quote'],
    ['a cwd up and out', { command: 'ls', cwd: '../other-run' }, 'cwd', ''],
    ['an absolute cwd', { command: 'ls', cwd: '/etc' }, 'cwd', ''],
    ['an oversize command', { command: `echo ${'x'.repeat(2_001)}` }, 'command', '2000'],
    ['AWS_SECRET_ACCESS_KEY', { command: 'env', env: { AWS_SECRET_ACCESS_KEY: 'x' } }, 'env.AWS_SECRET_ACCESS_KEY', 'looks like a secret'],
    ['GITHUB_TOKEN', { command: 'env', env: { GITHUB_TOKEN: 'x' } }, 'env.GITHUB_TOKEN', 'looks like a secret'],
    ['a timeout above the maximum', { command: 'sleep 1', timeoutSeconds: 7_200 }, 'timeoutSeconds', '3600'],
  ])('refuses %s before anything runs, naming the field', (_what, args, path, words) => {
    const issues = refusal(args);
    expect(issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining(path), message: expect.stringContaining(words) })]));
  });
});
