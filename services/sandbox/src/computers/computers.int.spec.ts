import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComputerSpecSchema, computerStream, type ComputerSpec } from '@packetagent/contracts';
import { eventually, hostProcesses, sshdAvailable } from '@packetagent/testing';
import type { ComputerRegistry } from './computer-registry';
import { ProbeLeader } from './probe-leader';
import { startRemote } from './ssh/remote-process';
import { SshLink } from './ssh/ssh-link';
import { computerKit, operator, ws, type ComputerKit } from './testing/computer.testkit';

const describeWithSshd = sshdAvailable() ? describe : describe.skip;

describeWithSshd('computers over a real OpenSSH server', () => {
  let kit: ComputerKit;
  let root: string;
  let outside: string;

  const spec = (overrides: Partial<ComputerSpec> = {}, hostKeys = [kit.sshd.hostFingerprint()]) =>
    ComputerSpecSchema.parse({
      kind: 'ssh',
      ssh: { host: '127.0.0.1', port: kit.sshd.port, user: kit.sshd.user, hostKeys, keyCredential: 'build_key' },
      roots: [root],
      policy: { shell: 'allow', write: 'allow', network: 'allow' },
      ...overrides,
    });

  beforeAll(async () => {
    kit = await computerKit();
    root = await mkdtemp(join(tmpdir(), 'pa-root-'));
    outside = await mkdtemp(join(tmpdir(), 'pa-outside-'));
    await mkdir(join(root, 'app'));
    await symlink(outside, join(root, 'escape'));
    await kit.registry.put(ws, 'build-box', spec(), operator, {});
  });
  afterAll(async () => {
    await kit?.close();
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('refuses a host without a pinned key, naming the key it presented; pins it once confirmed; a wrong confirmation registers nothing', async () => {
    const presented = kit.sshd.hostFingerprint();
    await expect(kit.registry.put(ws, 'unpinned', spec({}, []), operator, {})).rejects.toMatchObject({
      code: 'host_key_unpinned',
      issues: [{ path: 'acceptHostKey', message: `the host presented ${presented} (ssh-ed25519); confirm it to pin it` }],
    });
    expect(await kit.store.get(ws, 'unpinned')).toBeNull();

    const wrong = 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    await expect(kit.registry.put(ws, 'unpinned', spec({}, []), operator, { acceptHostKey: wrong })).rejects.toMatchObject({ code: 'host_key_changed' });
    expect(await kit.store.get(ws, 'unpinned')).toBeNull();

    const pinned = await kit.registry.put(ws, 'unpinned', spec({}, []), operator, { acceptHostKey: presented });
    expect(pinned.ssh?.hostKeys).toEqual([presented]);
    const history = await kit.db.pool.query<{ type: string; data: { acceptedHostKey: string } }>('SELECT type, data FROM events WHERE stream_id = $1', [computerStream(ws, 'unpinned')]);
    expect(history.rows).toEqual([{ type: 'computer.registered', data: expect.objectContaining({ acceptedHostKey: presented }) }]);
  });

  it('runs a local computer\'s commands in this sandbox under its rules: the workspace-relative cwd, no secrets', async () => {
    await kit.registry.put(ws, 'here', ComputerSpecSchema.parse({ kind: 'local' }), operator, {});
    await mkdir(join(kit.runsDir, 'run-computers', 'workspace', 'sub'), { recursive: true });
    const result = await kit.exec('here', ['pwd'], { cwd: 'sub' });
    expect(result).toMatchObject({ state: 'exited', exitCode: 0, driver: 'bubblewrap', computer: 'here', stdout: { preview: '/workspace/sub\n' } });
    await expect(kit.exec('here', ['pwd'], { cwd: '../other' })).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'cwd', message: 'escapes the workspace' }] });
    await expect(kit.exec('here', ['true'], { secrets: { TOKEN: 'x' } })).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'secrets.TOKEN' }] });
  });

  it('fills the policy in conservatively: network, write and shell ask, secrets denied, approval explicit', async () => {
    const view = await kit.registry.put(ws, 'careful', spec({ policy: {} }), operator, {});
    expect(view.policy).toEqual({ network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit' });
  });

  it('runs a command in a root: exit code and output, in the resolved cwd, with none of the host environment', async () => {
    process.env['PACKETAGENT_SENTINEL_TOKEN'] = 'host-secret-value-1234';
    const result = await kit.exec('build-box', ['sh', '-c', 'pwd; env | sort; exit 3'], { cwd: 'app', env: { CI: 'true' } });
    delete process.env['PACKETAGENT_SENTINEL_TOKEN'];
    expect(result).toMatchObject({ state: 'exited', exitCode: 3, driver: 'ssh', computer: 'build-box', killConfirmed: null });
    const lines = result.stdout.preview.trim().split('\n');
    expect(lines[0]).toBe(join(root, 'app'));
    const names = lines.slice(1).map((line) => line.split('=')[0]).filter((name) => name !== 'PWD' && name !== 'SHLVL' && name !== '_');
    expect(names).toEqual(['CI', 'HOME', 'LANG', 'LOGNAME', 'PATH', 'USER']);
    expect(result.stdout.preview).not.toContain('host-secret-value-1234');
    expect(result.unenforced.join(' ')).toMatch(/memory/);
  });

  it('hands secrets over stdin only where the policy allows them, never on a command line', async () => {
    await expect(kit.exec('build-box', ['sh', '-c', 'echo "$DEPLOY_TOKEN"'], { secrets: { DEPLOY_TOKEN: 'tok-3141' } })).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'secrets', message: "the computer's policy denies secrets" }] });
    await kit.registry.put(ws, 'trusted', spec({ policy: { shell: 'allow', write: 'allow', network: 'allow', secrets: 'allow' } }), operator, {});
    const value = `tok-${process.pid}-secret`;
    const running = kit.exec('trusted', ['sh', '-c', 'printf %s "$DEPLOY_TOKEN"; printf %s "$MULTI"; sleep 1'], { secrets: { DEPLOY_TOKEN: value, MULTI: '\nline one\nline two\n' } });
    await eventually(() => hostProcesses('sleep 1').length > 0, { timeoutMs: 15_000, what: 'the command to run' });
    expect(hostProcesses(value)).toEqual([]);
    const result = await running;
    expect(result.stdout.preview).toBe(`${value}\nline one\nline two\n`);
    const deny = await kit.registry.put(ws, 'closed', spec({ policy: { shell: 'deny' } }), operator, {});
    expect(deny.policy.shell).toBe('deny');
    await expect(kit.exec('closed', ['true'])).rejects.toMatchObject({ code: 'exec_refused' });
  });

  it('refuses cwd escapes: ../ before connecting, a symlink out of the root by its real path on the computer', async () => {
    await expect(kit.exec('build-box', ['pwd'], { cwd: '../' })).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'cwd', message: expect.stringContaining('outside the computer') }] });
    await expect(kit.exec('build-box', ['pwd'], { cwd: '/etc' })).rejects.toMatchObject({ code: 'exec_refused' });
    const viaLink = await kit.exec('build-box', ['pwd'], { cwd: 'escape' });
    expect(viaLink).toMatchObject({ state: 'failed', exitCode: null });
    expect(viaLink.message).toContain(`resolves to ${outside}, outside the computer's roots`);
  });

  it('kills the whole remote process group on cancel and says the kill was confirmed', async () => {
    const marker = `61.${process.pid}`;
    await writeFile(join(root, 'app', 'tree.sh'), `sleep ${marker} & sleep ${marker} & wait\n`);
    const running = kit.exec('build-box', ['sh', 'tree.sh'], { execId: 'run-computers:cancel', cwd: 'app' });
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 2, { timeoutMs: 15_000, what: 'both sleeps to run' });
    expect(kit.runner.cancel(ws, 'run-computers:cancel')).toBe(true);
    const result = await running;
    expect(result).toMatchObject({ state: 'killed', limit: 'cancelled', killConfirmed: true });
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
  });

  it('ends a command whose session is cut as lost, not failed or cancelled, and kills its group through a fresh link', async () => {
    const marker = `62.${process.pid}`;
    await writeFile(join(root, 'app', 'long.sh'), `echo begun; sleep ${marker}\n`);
    const running = kit.exec('build-box', ['sh', 'long.sh'], { cwd: 'app' });
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 1, { timeoutMs: 15_000, what: 'the command to run' });
    kit.sshd.killSessions();
    const result = await running;
    expect(result).toMatchObject({ state: 'lost', exitCode: null, killConfirmed: true });
    expect(result.message).toMatch(/whether it finished is not known/);
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
  });

  it('kills what a replica that died left running on a computer, by the process group it recorded', async () => {
    const marker = `65.${process.pid}`;
    await writeFile(join(root, 'app', 'orphan.sh'), `sleep ${marker}\n`);
    const record = (await kit.store.require(ws, 'build-box')).record;
    // A replica's link that ends without a kill, as when the replica dies: the command goes on.
    const link = await SshLink.open(record.ssh!, await kit.sshd.privateKey(), { connectTimeoutMs: 5_000, keepaliveMs: 1_000 });
    const orphan = await startRemote(link, { argv: ['sh', 'orphan.sh'], cwd: join(root, 'app'), roots: [root], cpuSeconds: 60, fileSizeBytes: 1024 ** 2, openFiles: 64 }, {}, () => Promise.reject(new Error('no relink')));
    link.close();
    await orphan.exited;
    expect(hostProcesses(`sleep ${marker}`)).toHaveLength(1);
    expect(await kit.execs.reclaim(ws, 'build-box', orphan.pgid!)).toBe(true);
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
    expect(kit.keyReads.probe).toBeGreaterThan(0);
  });

  it('probes from one replica at a time: the other takes over when the leader stops', async () => {
    const probed: string[] = [];
    const counting = (id: string) => ({ probeStored: async () => void probed.push(id) }) as unknown as ComputerRegistry;
    const a = new ProbeLeader(kit.db.pool, kit.store, counting('a'), { intervalMs: 50, log: () => undefined });
    const b = new ProbeLeader(kit.db.pool, kit.store, counting('b'), { intervalMs: 50, log: () => undefined });
    a.start();
    await eventually(() => a.leading, { what: 'a to lead' });
    b.start();
    await eventually(() => probed.filter((id) => id === 'a').length > 10, { what: 'a to probe' });
    expect(b.leading).toBe(false);
    expect(probed).not.toContain('b');
    await a.stop();
    await eventually(() => b.leading && probed.includes('b'), { what: 'b to take over' });
    await b.stop();
  });

  it('says online after a probe, unknown past the staleness window, offline after an affirmative failure, online again after a restart', async () => {
    expect((await kit.registry.get(ws, 'build-box')).status).toMatchObject({ state: 'unknown' });
    const online = await kit.registry.probe(ws, 'build-box');
    expect(online.status).toMatchObject({ state: 'online', observedAt: expect.any(String) });
    expect(online.capabilities).toMatchObject({ os: 'Linux', cpus: expect.any(Number) });
    expect(online.capabilities!.tools).toEqual(expect.arrayContaining(['base64']));

    await kit.sshd.stop();
    const stale = await eventually(async () => {
      const view = await kit.registry.get(ws, 'build-box');
      return view.status.state === 'unknown' && view;
    }, { timeoutMs: 10_000, what: 'status to go stale' });
    expect(stale.status.observedAt).toBe(online.status.observedAt);
    expect(stale.status.ageMs).toBeGreaterThan(2_000);

    expect((await kit.registry.probe(ws, 'build-box')).status).toMatchObject({ state: 'offline', detail: expect.stringContaining('refused the connection') });
    await kit.sshd.start();
    expect((await kit.registry.probe(ws, 'build-box')).status).toMatchObject({ state: 'online' });
  });

  it('refuses a changed host key for probes and commands, records it once and shows it on the status', async () => {
    await kit.registry.put(ws, 'rekeyed', spec(), operator, {});
    kit.sshd.killSessions();
    await kit.sshd.stop();
    kit.sshd.rotateHostKey();
    await kit.sshd.start();
    const presented = kit.sshd.hostFingerprint();
    try {
      const view = await kit.registry.probe(ws, 'rekeyed');
      expect(view.status).toMatchObject({ state: 'offline', hostKey: { state: 'changed', presented } });
      await kit.registry.probe(ws, 'rekeyed');
      const result = await kit.exec('rekeyed', ['true']);
      expect(result).toMatchObject({ state: 'failed' });
      expect(result.message).toContain(`presented ${presented}, which is not pinned`);
      const refused = await kit.db.pool.query<{ data: { purpose: string } }>(`SELECT data FROM events WHERE stream_id = $1 AND type = 'computer.host_key_refused' ORDER BY stream_version`, [computerStream(ws, 'rekeyed')]);
      expect(refused.rows.map((row) => row.data.purpose)).toEqual(['probe', 'exec']);
    } finally {
      // The other computers keep the key they pinned.
      await kit.registry.put(ws, 'build-box', spec({}, [presented]), operator, {});
    }
  });

  it('fails loudly on a record of a newer layout and never resets it', async () => {
    await kit.registry.put(ws, 'future', spec(), operator, {});
    await kit.db.pool.query(`UPDATE sandbox.computers SET record = jsonb_set(record, '{recordVersion}', '2') WHERE workspace_id = $1 AND name = 'future'`, [ws]);
    const before = await kit.db.pool.query('SELECT record, version FROM sandbox.computers WHERE workspace_id = $1 AND name = $2', [ws, 'future']);
    await expect(kit.registry.get(ws, 'future')).rejects.toMatchObject({ code: 'computer_record_unreadable', message: expect.stringContaining('layout version 2') });
    await expect(kit.registry.put(ws, 'future', spec(), operator, {})).rejects.toMatchObject({ code: 'computer_record_unreadable' });
    await expect(kit.exec('future', ['true'])).rejects.toMatchObject({ code: 'computer_record_unreadable' });
    await expect(kit.registry.list(ws)).rejects.toMatchObject({ code: 'computer_record_unreadable' });
    const after = await kit.db.pool.query('SELECT record, version FROM sandbox.computers WHERE workspace_id = $1 AND name = $2', [ws, 'future']);
    expect(after.rows).toEqual(before.rows);
    await kit.registry.remove(ws, 'future', operator);
  });
});
