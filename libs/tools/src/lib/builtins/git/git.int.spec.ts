import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolRegistry } from '../../registry';
import { allowFor, contextFor, gitHttpServer, gitSync, temporaryDirectory, type LocalServer } from '../../testing/tools.testkit';
import type { ToolContext } from '../../tool.types';
import { runBranch } from './git.tool';

const TOKEN = 'ghp_pushtoken0123456789';

describe('git', () => {
  let root: { path: string; remove(): Promise<void> };
  let server: LocalServer;
  let originUrl: string;
  let barePath: string;
  let workDir: string;
  let ctx: ToolContext;
  let sut: ToolRegistry;

  beforeAll(async () => {
    root = await temporaryDirectory('git-tool');
    await mkdir(join(root.path, 'served'));
    server = await gitHttpServer(join(root.path, 'served'));
  });

  afterAll(async () => {
    await server.close();
    await root.remove();
  });

  beforeEach(async () => {
    const id = Math.random().toString(36).slice(2, 10);
    // A bare "origin" with one commit on main, served over HTTP.
    const seed = join(root.path, `seed-${id}`);
    await mkdir(seed);
    gitSync(seed, ['init', '--quiet']);
    await writeFile(join(seed, 'README.md'), '# widgets\n');
    gitSync(seed, ['add', '.']);
    gitSync(seed, ['commit', '--quiet', '-m', 'initial']);
    barePath = join(root.path, 'served', `${id}.git`);
    gitSync(root.path, ['clone', '--quiet', '--bare', seed, barePath]);
    originUrl = `${server.origin}/${id}.git`;

    workDir = join(root.path, `work-${id}`);
    await mkdir(workDir);
    ctx = contextFor({ workDir, runId: 'run:01J@x', credentials: { git_token: TOKEN } });
    sut = new ToolRegistry({ config: { httpAllowPrivate: [`127.0.0.1:${server.port}`] } });
    server.received.length = 0;
  });

  async function git(args: Record<string, unknown>, registry = sut) {
    const planned = registry.plan('call', 'git', args);
    return registry.execute(planned, allowFor(planned), ctx);
  }

  /**
   * A workspace made with `git init` whose origin is the bare repository, then named by its
   * http URL (set-up fetches from the path: a synchronous fetch from this process's own server
   * could never be answered).
   */
  async function initWorkspace(): Promise<void> {
    gitSync(workDir, ['init', '--quiet']);
    gitSync(workDir, ['remote', 'add', 'origin', barePath]);
    gitSync(workDir, ['fetch', '--quiet', 'origin']);
    gitSync(workDir, ['checkout', '--quiet', '-b', 'main', 'origin/main']);
    gitSync(workDir, ['remote', 'set-url', 'origin', originUrl]);
  }

  it('names the run branch from the run id', () => {
    expect(runBranch('run:01J@x')).toBe('packetagent/run-run-01J-x');
  });

  it('reports status and diff of the workspace repository', async () => {
    await initWorkspace();
    await writeFile(join(workDir, 'README.md'), '# widgets\n\nNow documented.\n');
    await writeFile(join(workDir, 'NEW.md'), 'new\n');

    const status = await git({ op: 'status', url: originUrl });
    const diff = await git({ op: 'diff', url: originUrl });

    expect(status).toMatchObject({ ok: true, output: { branch: 'main', clean: false } });
    expect((status.output as { files: Array<{ path: string }> }).files.map((file) => file.path).sort()).toEqual(['NEW.md', 'README.md']);
    expect(diff).toMatchObject({ ok: true, output: { truncated: false, untracked: ['NEW.md'] } });
    expect((diff.output as { diff: string }).diff).toContain('+Now documented.');
  });

  it('commits every change on the run branch, creating it', async () => {
    await initWorkspace();
    await writeFile(join(workDir, 'CHANGELOG.md'), '- fixed\n');

    const outcome = await git({ op: 'commit', url: originUrl, message: 'Add changelog' });

    const branch = 'packetagent/run-run-01J-x';
    expect(outcome).toMatchObject({ ok: true, output: { branch, files: 1 } });
    expect(gitSync(workDir, ['symbolic-ref', '--short', 'HEAD']).trim()).toBe(branch);
    expect(gitSync(workDir, ['log', '-1', '--format=%s|%an|%H']).trim()).toBe(`Add changelog|PacketAgent run|${(outcome.output as { commit: string }).commit}`);
    expect(gitSync(workDir, ['status', '--porcelain']).trim()).toBe('');
  });

  it('commits again on the existing run branch after switching away', async () => {
    await initWorkspace();
    await writeFile(join(workDir, 'a.txt'), 'a\n');
    await git({ op: 'commit', url: originUrl, message: 'first' });
    gitSync(workDir, ['checkout', '--quiet', 'main']);
    await writeFile(join(workDir, 'b.txt'), 'b\n');

    const outcome = await git({ op: 'commit', url: originUrl, message: 'second' });

    expect(outcome.ok).toBe(true);
    expect(gitSync(workDir, ['log', '--format=%s', 'packetagent/run-run-01J-x']).trim().split('\n')).toEqual(['second', 'first', 'initial']);
  });

  it('answers nothing_to_commit for a clean workspace', async () => {
    await initWorkspace();

    const outcome = await git({ op: 'commit', url: originUrl, message: 'empty' });

    expect(outcome).toMatchObject({ ok: false, error: { code: 'nothing_to_commit' } });
  });

  it('never runs the repository\'s hooks', async () => {
    await initWorkspace();
    const marker = join(root.path, `hook-ran-${Date.now()}`);
    const hook = join(workDir, '.git', 'hooks', 'pre-commit');
    await writeFile(hook, `#!/bin/sh\ntouch ${marker}\n`);
    await chmod(hook, 0o755);
    await writeFile(join(workDir, 'x.txt'), 'x\n');

    const outcome = await git({ op: 'commit', url: originUrl, message: 'with hook present' });

    expect(outcome.ok).toBe(true);
    await expect(stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('pushes the run branch to origin with the credential in a header', async () => {
    await initWorkspace();
    await writeFile(join(workDir, 'fix.txt'), 'fix\n');
    const committed = await git({ op: 'commit', url: originUrl, message: 'Fix' });

    const outcome = await git({ op: 'push', url: originUrl, credential: 'git_token' });

    expect(outcome).toMatchObject({ ok: true, output: { branch: 'packetagent/run-run-01J-x', pushed: true } });
    expect(gitSync(barePath, ['rev-parse', 'refs/heads/packetagent/run-run-01J-x']).trim()).toBe((committed.output as { commit: string }).commit);
    const authorization = `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`;
    expect(server.received.some((request) => request.headers.authorization === authorization)).toBe(true);
    expect(JSON.stringify(outcome)).not.toContain(TOKEN);
  });

  it('clones an allowlisted repository into the empty workspace', async () => {
    const outcome = await git({ op: 'clone', url: originUrl });

    expect(outcome).toMatchObject({ ok: true, output: { branch: 'main' } });
    expect(await readFile(join(workDir, 'README.md'), 'utf8')).toBe('# widgets\n');
    expect(gitSync(workDir, ['remote', 'get-url', 'origin']).trim()).toBe(originUrl);
  });

  it('connects git to the checked address of a host name', async () => {
    const named = originUrl.replace('127.0.0.1', 'repo.example.test');
    const resolved: string[] = [];
    const pinned = new ToolRegistry({
      config: { httpAllowPrivate: [`repo.example.test:${server.port}`] },
      resolveHost: async (hostname) => {
        resolved.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });

    const outcome = await git({ op: 'clone', url: named }, pinned);

    // The system resolver knows no .test names: the clone can only have used the checked address.
    expect(outcome).toMatchObject({ ok: true, output: { branch: 'main' } });
    expect(resolved).toEqual(['repo.example.test']);
    expect(server.received[0]!.headers.host).toBe(`repo.example.test:${server.port}`);
  });

  it('refuses to clone from a private address that is not allowlisted, without connecting', async () => {
    const strict = new ToolRegistry();

    const outcome = await git({ op: 'clone', url: originUrl }, strict);

    expect(outcome).toMatchObject({ ok: false, error: { code: 'destination_not_allowed' } });
    expect(server.received).toHaveLength(0);
  });

  it('refuses a push when the origin is not allowlisted, without connecting', async () => {
    await initWorkspace();
    await writeFile(join(workDir, 'fix.txt'), 'fix\n');
    await git({ op: 'commit', url: originUrl, message: 'Fix' });
    server.received.length = 0;

    const outcome = await git({ op: 'push', url: originUrl }, new ToolRegistry());

    expect(outcome.error?.code).toBe('destination_not_allowed');
    expect(server.received).toHaveLength(0);
  });

  it('refuses to work on a repository other than the one the call names', async () => {
    await initWorkspace();

    const outcome = await git({ op: 'status', url: 'https://github.com/acme/other.git' });

    expect(outcome).toMatchObject({ ok: false, error: { code: 'remote_mismatch', message: `the workspace repository's origin is ${originUrl}, not https://github.com/acme/other.git` } });
  });

  it('refuses a workspace repository without an origin remote', async () => {
    gitSync(workDir, ['init', '--quiet']);

    const outcome = await git({ op: 'status', url: originUrl });

    expect(outcome).toMatchObject({ ok: false, error: { code: 'no_remote', message: expect.stringContaining('has no "origin" remote') } });
  });

  it('refuses a workspace that is not a repository', async () => {
    const outcome = await git({ op: 'diff', url: originUrl });

    expect(outcome.error?.code).toBe('not_a_repository');
  });
});
