import { createServer, type Server } from 'node:net';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sandboxKit, type SandboxKit } from '../../testing/sandbox.testkit';

/** Runs a Node script inside the sandbox and answers what it printed. */
async function inside(kit: SandboxKit, script: string, fields: Parameters<SandboxKit['exec']>[1] = {}): Promise<string> {
  const result = await kit.exec(['node', '-e', script], fields);
  expect(result).toMatchObject({ state: 'exited', driver: 'bubblewrap' });
  return result.stdout.preview.trim();
}

describe('bubblewrap sandbox isolation', () => {
  let kit: SandboxKit;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    kit = await sandboxKit();
    server = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    await writeFile(join(kit.dataDir, 'master.key'), 'not-a-real-key\n', { mode: 0o600 });
  });
  afterAll(async () => {
    server.close();
    await kit.close();
  });

  it('cannot connect to a port the host listens on, on loopback', async () => {
    const out = await inside(kit, `require('net').connect(${port}, '127.0.0.1').on('connect', () => console.log('CONNECTED')).on('error', (e) => console.log('ERR', e.code))`);
    expect(out).toMatch(/^ERR (ECONNREFUSED|ENETUNREACH)$/);
  });

  it('has no name resolution', async () => {
    const out = await inside(kit, `require('dns').lookup('example.com', (e, a) => console.log(e ? 'ERR ' + e.code : 'RESOLVED ' + a))`);
    expect(out).toMatch(/^ERR /);
  });

  it('writes only inside the workspace and /tmp', async () => {
    const out = await inside(
      kit,
      `const fs = require('fs'); for (const p of ['/workspace/ok.txt', '/tmp/ok.txt', '/usr/x', '/etc/x', '/x', '/proc/x', '/input-x']) { try { fs.writeFileSync(p, 'x'); console.log(p, 'written') } catch (e) { console.log(p, e.code) } }`,
    );
    expect(out.split('\n')).toEqual(['/workspace/ok.txt written', '/tmp/ok.txt written', '/usr/x EROFS', '/etc/x EROFS', '/x EROFS', '/proc/x ENOENT', '/input-x EROFS']);
  });

  it("sees nothing of the host's home, shadow file, data directory or master key", async () => {
    const paths = ['/root', '/etc/shadow', kit.dataDir, join(kit.dataDir, 'master.key'), '/home', '/var/lib/postgresql'];
    const out = await inside(kit, `const fs = require('fs'); for (const p of ${JSON.stringify(paths)}) { try { fs.readFileSync(p); console.log(p, 'READ') } catch (e) { console.log(p, e.code) } }`);
    for (const line of out.split('\n')) expect(line).toMatch(/ (ENOENT|EACCES)$/);
  });

  it('sees none of the host processes and holds no capabilities', async () => {
    const out = await inside(kit, `const fs = require('fs'); const pids = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)); console.log(pids.length, pids.includes('${process.pid}')); console.log(fs.readFileSync('/proc/self/status', 'utf8').match(/CapEff:\\s*(\\w+)/)[1]); console.log(require('os').userInfo().uid)`);
    const [count, capabilities, uid] = out.split('\n');
    const [visible, includesHost] = count!.split(' ');
    expect(Number(visible)).toBeLessThanOrEqual(3);
    expect(includesHost).toBe('false');
    expect(capabilities).toBe('0000000000000000');
    expect(uid).toBe('65534');
  });

  it('holds only the allowlisted environment, never the host one', async () => {
    process.env['PACKETAGENT_TEST_HOST_ONLY'] = 'host value';
    const out = await inside(kit, 'console.log(JSON.stringify(process.env))', { env: { CI: 'true' } });
    delete process.env['PACKETAGENT_TEST_HOST_ONLY'];
    expect(JSON.parse(out)).toEqual({ PATH: expect.any(String), HOME: '/tmp/home', LANG: 'C.UTF-8', TMPDIR: '/tmp', PWD: '/workspace', CI: 'true' });
  });

  it('works in the run workspace, shared with the files tool, at /workspace', async () => {
    const workspace = join(kit.dataDir, 'runs', 'run-iso', 'workspace');
    await mkdir(join(workspace, 'src'), { recursive: true });
    await writeFile(join(workspace, 'src', 'input.txt'), 'from the files tool\n');
    const out = await inside(kit, `console.log(process.cwd(), require('fs').readFileSync('input.txt', 'utf8').trim()); require('fs').writeFileSync('output.txt', 'from the command')`, { runId: 'run-iso', cwd: 'src' });
    expect(out).toBe('/workspace/src from the files tool');
  });

  it('refuses a cwd that escapes the workspace, by .. or through a symlink, and runs nothing', async () => {
    const workspace = join(kit.dataDir, 'runs', 'run-escape', 'workspace');
    await mkdir(workspace, { recursive: true });
    await symlink('/etc', join(workspace, 'etc-link'));
    await expect(kit.exec(['true'], { runId: 'run-escape', cwd: '../..' })).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'cwd', message: 'escapes the workspace' }] });
    await expect(kit.exec(['true'], { runId: 'run-escape', cwd: 'etc-link' })).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'cwd', message: 'etc-link leads out of the workspace (through a symlink)' }] });
    expect(await kit.store.list('ws_sandbox', { runId: 'run-escape', limit: 10 })).toEqual([]);
  });
});
