import { lstat, mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolRegistry } from '../../registry';
import { allowFor, contextFor, temporaryDirectory } from '../../testing/tools.testkit';
import type { ToolContext } from '../../tool.types';

describe('files', () => {
  const sut = new ToolRegistry();
  let workDir: { path: string; remove(): Promise<void> };
  let outside: { path: string; remove(): Promise<void> };
  let ctx: ToolContext;

  beforeEach(async () => {
    workDir = await temporaryDirectory('files-work');
    outside = await temporaryDirectory('files-outside');
    await writeFile(join(outside.path, 'secret.txt'), 'outside secret');
    ctx = contextFor({ workDir: workDir.path });
  });

  afterEach(async () => {
    await workDir.remove();
    await outside.remove();
  });

  async function files(args: Record<string, unknown>) {
    const planned = sut.plan('call', 'files', args);
    return sut.execute(planned, allowFor(planned), ctx);
  }

  it('writes a file (creating its directories) and reads it back', async () => {
    const written = await files({ op: 'write', path: 'src/deep/a.txt', content: 'alpha\nbeta\n' });
    const read = await files({ op: 'read', path: 'src/deep/a.txt' });

    expect(written).toMatchObject({ ok: true, output: { path: 'src/deep/a.txt', bytes: 11, created: true } });
    expect(read).toMatchObject({ ok: true, output: { content: 'alpha\nbeta\n', truncated: false } });
    expect(await readFile(join(workDir.path, 'src/deep/a.txt'), 'utf8')).toBe('alpha\nbeta\n');
  });

  it('continues a long read from nextOffset', async () => {
    await writeFile(join(workDir.path, 'long.txt'), 'a'.repeat(40_000) + 'END');

    const first = await files({ op: 'read', path: 'long.txt' });
    const next = (first.output as { nextOffset: number }).nextOffset;
    const second = await files({ op: 'read', path: 'long.txt', offset: next });

    expect(first.output).toMatchObject({ truncated: true, nextOffset: 32 * 1024 });
    expect(second.output).toMatchObject({ truncated: false });
    expect((second.output as { content: string }).content.endsWith('END')).toBe(true);
  });

  it('refuses a ".." escape before anything runs', () => {
    expect(() => sut.plan('call', 'files', { op: 'read', path: '../x' })).toThrow(/path: .*escapes the run workspace/);
    expect(() => sut.plan('call', 'files', { op: 'read', path: 'a/../../x' })).toThrow(/escapes the run workspace/);
  });

  it('refuses an absolute path before anything runs', () => {
    expect(() => sut.plan('call', 'files', { op: 'write', path: join(outside.path, 'x.txt'), content: 'x' })).toThrow(/absolute paths are not allowed/);
  });

  it('refuses to read or write through a symbolic link to a file outside the workspace', async () => {
    await symlink(join(outside.path, 'secret.txt'), join(workDir.path, 'leak.txt'));

    const read = await files({ op: 'read', path: 'leak.txt' });
    const written = await files({ op: 'write', path: 'leak.txt', content: 'overwritten' });

    expect(read).toMatchObject({ ok: false, error: { code: 'path_outside_workspace' } });
    expect(JSON.stringify(read)).not.toContain('outside secret');
    expect(written.error?.code).toBe('path_outside_workspace');
    expect(await readFile(join(outside.path, 'secret.txt'), 'utf8')).toBe('outside secret');
  });

  it('refuses to write through a symbolic link to a directory outside the workspace', async () => {
    await symlink(outside.path, join(workDir.path, 'out'));

    const outcome = await files({ op: 'write', path: 'out/planted.txt', content: 'x' });

    expect(outcome).toMatchObject({ ok: false, error: { code: 'path_outside_workspace', message: 'out leads outside the run workspace through a symbolic link' } });
    await expect(lstat(join(outside.path, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses to delete through a symbolic link that leads outside', async () => {
    await symlink(outside.path, join(workDir.path, 'out'));

    const outcome = await files({ op: 'delete', path: 'out/secret.txt' });

    expect(outcome.error?.code).toBe('path_outside_workspace');
    expect(await readFile(join(outside.path, 'secret.txt'), 'utf8')).toBe('outside secret');
  });

  it('follows a symbolic link that stays inside the workspace, and replaces the target, not the link', async () => {
    await writeFile(join(workDir.path, 'real.txt'), 'old');
    await symlink('real.txt', join(workDir.path, 'alias.txt'));

    const outcome = await files({ op: 'write', path: 'alias.txt', content: 'new' });

    expect(outcome.ok).toBe(true);
    expect(await readFile(join(workDir.path, 'real.txt'), 'utf8')).toBe('new');
    expect(await readlink(join(workDir.path, 'alias.txt'))).toBe('real.txt');
  });

  it('refuses a link into .git', async () => {
    await mkdir(join(workDir.path, '.git'));
    await writeFile(join(workDir.path, '.git', 'config'), '[core]');
    await symlink('.git', join(workDir.path, 'meta'));

    const outcome = await files({ op: 'write', path: 'meta/config', content: '[core]\n\tfsmonitor = evil' });

    expect(outcome.error?.code).toBe('path_outside_workspace');
    expect(await readFile(join(workDir.path, '.git', 'config'), 'utf8')).toBe('[core]');
  });

  it('lists a directory without the .git directory', async () => {
    await mkdir(join(workDir.path, '.git'));
    await mkdir(join(workDir.path, 'src'));
    await writeFile(join(workDir.path, 'README.md'), '# x');

    const outcome = await files({ op: 'list', path: '.' });

    expect(outcome.output).toMatchObject({ path: '.', entries: [{ name: 'README.md', type: 'file' }, { name: 'src', type: 'directory' }], total: 2 });
  });

  it('searches text under a directory and reports path and line', async () => {
    await files({ op: 'write', path: 'src/a.ts', content: 'const a = 1;\n// TODO: fix\n' });
    await files({ op: 'write', path: 'src/b.md', content: 'nothing\nTODO: write docs\n' });
    await files({ op: 'write', path: 'other/c.ts', content: 'TODO elsewhere' });

    const all = await files({ op: 'search', path: 'src', pattern: 'TODO' });
    const onlyTs = await files({ op: 'search', path: '.', pattern: 'TODO', glob: '**/*.ts' });

    expect(all.output).toMatchObject({
      matches: [
        { path: 'src/a.ts', line: 2, text: '// TODO: fix' },
        { path: 'src/b.md', line: 2, text: 'TODO: write docs' },
      ],
      truncated: false,
    });
    expect((onlyTs.output as { matches: Array<{ path: string }> }).matches.map((match) => match.path)).toEqual(['other/c.ts', 'src/a.ts']);
  });

  it('refuses a search glob that could leave the searched directory', () => {
    expect(() => sut.plan('call', 'files', { op: 'search', path: 'src', pattern: 'x', glob: '../**' })).toThrow(/glob: must stay under `path`/);
    expect(() => sut.plan('call', 'files', { op: 'search', path: 'src', pattern: 'x', glob: '{/etc/*,x}' })).toThrow(/glob: must stay under `path`/);
  });

  it('does not search through a link leading outside', async () => {
    await symlink(outside.path, join(workDir.path, 'out'));

    const outcome = await files({ op: 'search', path: '.', pattern: 'secret' });

    expect(outcome).toMatchObject({ ok: true, output: { matches: [] } });
  });

  it('edits the one occurrence of the text to find', async () => {
    await writeFile(join(workDir.path, 'config.yml'), 'name: a\nreplicas: 1\n');

    const outcome = await files({ op: 'edit', path: 'config.yml', find: 'replicas: 1', replace: 'replicas: $& 3' });

    expect(outcome).toMatchObject({ ok: true, output: { path: 'config.yml', line: 2 } });
    expect(await readFile(join(workDir.path, 'config.yml'), 'utf8')).toBe('name: a\nreplicas: $& 3\n');
  });

  it('refuses an edit whose text occurs twice, and one whose text is absent', async () => {
    await writeFile(join(workDir.path, 'twice.txt'), 'x = 1\nx = 1\n');

    const twice = await files({ op: 'edit', path: 'twice.txt', find: 'x = 1', replace: 'x = 2' });
    const absent = await files({ op: 'edit', path: 'twice.txt', find: 'y = 1', replace: 'y = 2' });

    expect(twice).toMatchObject({ ok: false, error: { code: 'find_ambiguous', message: expect.stringContaining('2 times') } });
    expect(absent).toMatchObject({ ok: false, error: { code: 'find_not_found' } });
    expect(await readFile(join(workDir.path, 'twice.txt'), 'utf8')).toBe('x = 1\nx = 1\n');
  });

  it('deletes a file, and answers success when it is already gone', async () => {
    await writeFile(join(workDir.path, 'gone.txt'), 'x');

    const first = await files({ op: 'delete', path: 'gone.txt' });
    const again = await files({ op: 'delete', path: 'gone.txt' });

    expect(first.output).toMatchObject({ deleted: true, existed: true });
    expect(again).toMatchObject({ ok: true, output: { deleted: false, existed: false } });
  });

  it('answers not_found for a missing file and is_a_directory for a directory', async () => {
    await mkdir(join(workDir.path, 'dir'));

    await expect(files({ op: 'read', path: 'missing.txt' })).resolves.toMatchObject({ ok: false, error: { code: 'not_found' } });
    await expect(files({ op: 'read', path: 'dir' })).resolves.toMatchObject({ ok: false, error: { code: 'is_a_directory' } });
  });

  it('refuses files over the size cap', async () => {
    await writeFile(join(workDir.path, 'big.bin'), Buffer.alloc(4 * 1024 * 1024 + 1));

    const outcome = await files({ op: 'read', path: 'big.bin' });

    expect(outcome.error?.code).toBe('file_too_large');
  });
});
