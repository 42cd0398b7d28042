import type { BrowserActResult, ExecRequest, ExecResult } from '@packetagent/contracts';
import { ToolArgumentsError } from '../../errors';
import { ToolRegistry } from '../../registry';
import { allowFor, contextFor } from '../../testing/tools.testkit';
import type { SandboxPort, ToolContext } from '../../tool.types';

function refusal(args: unknown): { path: string; message: string }[] {
  try {
    new ToolRegistry().plan('call-1', 'run_command', args);
  } catch (error) {
    if (error instanceof ToolArgumentsError) return [...error.issues];
    throw error;
  }
  throw new Error('the call was planned');
}

const EMPTY_STREAM = { preview: '', bytes: 0, truncated: false, digest: 'e'.repeat(64), chunks: [] };

function result(fields: Partial<ExecResult>): ExecResult {
  return {
    execId: 'idem-key-0001',
    workspaceId: 'ws_test',
    runId: 'run-0001',
    driver: 'ssh',
    computer: 'build-box',
    state: 'exited',
    exitCode: 0,
    signal: null,
    limit: null,
    message: null,
    durationMs: 12,
    stdout: { ...EMPTY_STREAM, preview: 'ok\n', bytes: 3 },
    stderr: EMPTY_STREAM,
    egress: [],
    limits: { wallTimeMs: 60_000, cpuSeconds: 60, memoryBytes: 512 * 1024 * 1024, pids: 256, fileSizeBytes: 1024 ** 3, openFiles: 1024, outputBytes: 1024 ** 2, tmpBytes: 64 * 1024 ** 2 },
    unenforced: [],
    killConfirmed: null,
    startedAt: '2026-11-30T09:00:00.000Z',
    endedAt: '2026-11-30T09:00:00.012Z',
    ...fields,
  };
}

/** The sandbox service as run_command sees it: records each exec request and answers `answer`. */
class RecordingSandbox implements SandboxPort {
  readonly requests: ExecRequest[] = [];
  constructor(private readonly answer: (request: ExecRequest) => ExecResult) {}
  async exec(request: ExecRequest): Promise<ExecResult> {
    this.requests.push(request);
    return this.answer(request);
  }
  async cancel(): Promise<boolean> {
    return true;
  }
  async browse(): Promise<BrowserActResult> {
    throw new Error('not a browser');
  }
}

function run(args: unknown, ctx: Partial<ToolContext>, answer: (request: ExecRequest) => ExecResult = () => result({})) {
  const sandbox = new RecordingSandbox(answer);
  const sut = new ToolRegistry({ sandbox });
  const planned = sut.plan('call-1', 'run_command', args);
  return { sandbox, outcome: sut.execute(planned, allowFor(planned), contextFor(ctx)) };
}

describe('run_command arguments', () => {
  it('plans a command with its cwd, timeout, environment names and egress, redacting environment values', () => {
    const planned = new ToolRegistry().plan('call-1', 'run_command', { command: 'npm  test', cwd: 'app', timeoutSeconds: 120, env: { CI: 'true' }, egress: [{ url: 'https://downloads.example.com/x.tgz' }] });
    expect(planned).toMatchObject({ verb: 'exec', resource: 'npm test', mutating: true, idempotentByKey: false, computer: null, credentials: [] });
    expect(planned.redactedArgs).toEqual({ command: 'npm  test', cwd: 'app', timeoutSeconds: 120, env: ['CI'], egress: ['https://downloads.example.com/x.tgz'] });
  });

  it('plans a command on a computer: the computer and the names of its secrets are the call, so its digest is another', () => {
    const registry = new ToolRegistry();
    const local = registry.plan('call-1', 'run_command', { command: 'npm publish' });
    const sut = registry.plan('call-1', 'run_command', { command: 'npm publish', computer: 'build-box', cwd: '/srv/build/app', secrets: { NPM_TOKEN: 'npm_token', GH_TOKEN: 'github_token' } });
    expect(sut).toMatchObject({ resource: 'npm publish', computer: 'build-box', credentials: ['github_token', 'npm_token'] });
    expect(sut.redactedArgs).toEqual({ command: 'npm publish', computer: 'build-box', cwd: '/srv/build/app', secrets: { GH_TOKEN: 'github_token', NPM_TOKEN: 'npm_token' } });
    expect(sut.callDigest).not.toBe(local.callDigest);
    expect(registry.plan('call-1', 'run_command', { command: 'npm publish', computer: 'arm-runner', cwd: '/srv/build/app', secrets: { NPM_TOKEN: 'npm_token', GH_TOKEN: 'github_token' } }).callDigest).not.toBe(sut.callDigest);
  });

  it('takes a directory of the computer as cwd, absolute or relative', () => {
    const registry = new ToolRegistry();
    expect(registry.plan('call-1', 'run_command', { command: 'ls', computer: 'build-box', cwd: '/etc' }).args).toMatchObject({ cwd: '/etc' });
    expect(registry.plan('call-1', 'run_command', { command: 'ls', computer: 'build-box', cwd: 'app/src' }).args).toMatchObject({ cwd: 'app/src' });
  });

  it.each([
    ['a ; chain', { command: 'ls; cat /etc/passwd' }, 'command', 'shell metacharacters'],
    ['a variable', { command: 'echo $HOME' }, 'command', 'shell metacharacters'],
    ['an open quote', { command: 'node -e "oops' }, 'command', 'unterminated " quote'],
    ['a cwd up and out', { command: 'ls', cwd: '../other-run' }, 'cwd', ''],
    ['an absolute cwd without a computer', { command: 'ls', cwd: '/etc' }, 'cwd', ''],
    ['a NUL in the cwd of a computer', { command: 'ls', computer: 'build-box', cwd: '/srv/a\u0000b' }, 'cwd', 'NUL'],
    ['an oversize cwd on a computer', { command: 'ls', computer: 'build-box', cwd: `/${'x'.repeat(1_024)}` }, 'cwd', '1024'],
    ['a computer name that is not one', { command: 'ls', computer: 'Build Box' }, 'computer', ''],
    ['an oversize command', { command: `echo ${'x'.repeat(2_001)}` }, 'command', '2000'],
    ['AWS_SECRET_ACCESS_KEY', { command: 'env', env: { AWS_SECRET_ACCESS_KEY: 'x' } }, 'env.AWS_SECRET_ACCESS_KEY', 'looks like a secret'],
    ['GITHUB_TOKEN', { command: 'env', env: { GITHUB_TOKEN: 'x' } }, 'env.GITHUB_TOKEN', 'looks like a secret'],
    ['a timeout above the maximum', { command: 'sleep 1', timeoutSeconds: 7_200 }, 'timeoutSeconds', '3600'],
    ['a secret under a name that is not an environment name', { command: 'env', secrets: { 'NPM-TOKEN': 'npm_token' } }, 'secrets', 'not a plain environment name'],
    ['a secret from a credential name that is not one', { command: 'env', secrets: { NPM_TOKEN: 'NPM token' } }, 'secrets.NPM_TOKEN', ''],
    ['more than 16 secrets', { command: 'env', secrets: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`S${i}`, 'npm_token'])) }, 'secrets', 'at most 16'],
    ['a variable set both in env and from a secret', { command: 'env', env: { NPM_CONFIG: 'x' }, secrets: { NPM_CONFIG: 'npm_token' } }, 'secrets.NPM_CONFIG', 'also set in env'],
  ])('refuses %s before anything runs, naming the field', (_what, args, path, words) => {
    const issues = refusal(args);
    expect(issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining(path), message: expect.stringContaining(words) })]));
  });
});

describe('run_command on a computer', () => {
  it('sends the computer with its key grant and the secrets by their values, and keeps the values out of what the model sees', async () => {
    const { sandbox, outcome } = run(
      { command: 'npm publish', computer: 'build-box', cwd: '/srv/build', secrets: { NPM_TOKEN: 'npm_token' } },
      { computerGrant: 'signed.grant', credentials: { npm_token: 'npm_SECRET_value_42' } },
      () => result({ stdout: { ...EMPTY_STREAM, preview: 'published with npm_SECRET_value_42\n', bytes: 36 } }),
    );
    const sut = await outcome;
    expect(sandbox.requests).toEqual([
      expect.objectContaining({ execId: 'idem-key-0001', argv: ['npm', 'publish'], cwd: '/srv/build', computer: { name: 'build-box', keyGrant: 'signed.grant' }, secrets: { NPM_TOKEN: 'npm_SECRET_value_42' }, env: {} }),
    ]);
    expect(sut).toMatchObject({ ok: true, output: { exitCode: 0, computer: 'build-box' } });
    expect(JSON.stringify(sut)).not.toContain('npm_SECRET_value_42');
  });

  it('sends no computer and no secrets for a call in the local sandbox', async () => {
    const { sandbox, outcome } = run({ command: 'make test' }, {}, () => result({ driver: 'bubblewrap', computer: null }));
    await outcome;
    expect(sandbox.requests[0]).toMatchObject({ cwd: '.', secrets: {} });
    expect(sandbox.requests[0]).not.toHaveProperty('computer');
  });

  it('answers computer_not_authorized, running nothing, when the call came without a grant for the key', async () => {
    const { sandbox, outcome } = run({ command: 'make test', computer: 'build-box' }, {});
    expect(await outcome).toMatchObject({ ok: false, error: { code: 'computer_not_authorized' } });
    expect(sandbox.requests).toEqual([]);
  });

  it('answers credential_unavailable, running nothing, when a secret\'s credential was not resolved', async () => {
    const { sandbox, outcome } = run({ command: 'npm publish', computer: 'build-box', secrets: { NPM_TOKEN: 'npm_token' } }, { computerGrant: 'signed.grant' });
    expect(await outcome).toMatchObject({ ok: false, error: { code: 'credential_unavailable', message: 'the credential "npm_token" was not provided for this call' } });
    expect(sandbox.requests).toEqual([]);
  });

  it('says the outcome is not known when the link to the computer broke: lost, never a failure the command reported', async () => {
    const { outcome } = run({ command: 'make deploy', computer: 'build-box' }, { computerGrant: 'signed.grant' }, () => result({ state: 'lost', exitCode: null, killConfirmed: false }));
    const detail = 'the link to computer "build-box" broke while the command ran: whether it finished is not known';
    expect(await outcome).toEqual({
      ok: false,
      output: expect.objectContaining({ state: 'lost', killConfirmed: false, error: { code: 'transport_lost', message: detail } }),
      summary: `transport_lost: ${detail}`,
      error: { code: 'transport_lost', message: detail },
      lost: { cause: 'transport_lost', detail },
    });
  });

  it('reports whether a killed command\'s process group was seen gone', async () => {
    const { outcome } = run({ command: 'make test', computer: 'build-box' }, { computerGrant: 'signed.grant' }, () =>
      result({ state: 'killed', exitCode: null, signal: 'SIGKILL', limit: 'wall_time', killConfirmed: true }),
    );
    expect(await outcome).toMatchObject({ ok: false, output: { state: 'killed', killConfirmed: true }, error: { code: 'command_limit' } });
    expect(await outcome).not.toHaveProperty('lost');
  });
});
