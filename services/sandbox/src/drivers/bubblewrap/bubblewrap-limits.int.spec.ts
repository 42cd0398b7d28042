import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readChunkedBytes } from '@packetagent/eventstore';
import { eventually, hostProcesses } from '@packetagent/testing';
import { sandboxKit, type SandboxKit } from '../../testing/sandbox.testkit';

const MiB = 1024 * 1024;


describe('bubblewrap sandbox limits', () => {
  let kit: SandboxKit;
  let workspace: string;

  beforeAll(async () => {
    kit = await sandboxKit();
    workspace = join(kit.dataDir, 'runs', 'run-limits', 'workspace');
    await mkdir(workspace, { recursive: true });
  });
  afterAll(() => kit.close());

  it('holds a fork bomb at its process limit and ends it, naming the limit', async () => {
    // The script itself stays (a bomb whose first shell exits would end its sandbox with it, however far it got).
    await writeFile(join(workspace, 'bomb.sh'), 'bomb() { bomb | bomb & }\nbomb\nsleep 60\n');
    const result = await kit.exec(['sh', 'bomb.sh'], { runId: 'run-limits', limits: { pids: 64, wallTimeMs: 30_000 } });
    expect(result).toMatchObject({ state: 'killed', limit: 'pids', message: 'process limit of 64 reached: a fork was refused and the tree was ended' });
    expect(result.durationMs).toBeLessThan(30_000);
  });

  it('cuts a 10 GB write at the file size limit', async () => {
    const result = await kit.exec(['dd', 'if=/dev/zero', 'of=big.bin', 'bs=1M', 'count=10240'], { runId: 'run-limits', limits: { fileSizeBytes: 32 * MiB } });
    expect(result).toMatchObject({ state: 'killed', limit: 'file_size', signal: 'SIGXFSZ' });
  });

  it('ends a memory hog at the memory limit', async () => {
    const result = await kit.exec(['node', '-e', 'const kept = []; for (;;) kept.push(Buffer.alloc(1 << 20, 1))'], { limits: { memoryBytes: 128 * MiB, wallTimeMs: 60_000 } });
    expect(result).toMatchObject({ state: 'killed', limit: 'memory' });
  });

  it('ends an endless loop at its wall time, and a CPU-bound one at its CPU time', async () => {
    const wall = await kit.exec(['node', '-e', 'for (;;) {}'], { limits: { wallTimeMs: 1_500 } });
    expect(wall).toMatchObject({ state: 'killed', limit: 'wall_time', message: 'wall time limit of 1500 ms reached: the process tree was killed' });
    expect(wall.durationMs).toBeGreaterThanOrEqual(1_500);
    expect(wall.durationMs).toBeLessThan(10_000);

    const cpu = await kit.exec(['node', '-e', 'for (;;) {}'], { limits: { cpuSeconds: 1, wallTimeMs: 60_000 } });
    expect(cpu).toMatchObject({ state: 'killed', limit: 'cpu_time', signal: 'SIGXCPU' });
  });

  it('keeps 100 MB of output whole by reference, with a bounded preview, verified by digest', async () => {
    const size = 100 * 1000 * 1000;
    const result = await kit.exec(['head', '-c', String(size), '/dev/urandom']);
    expect(result).toMatchObject({ state: 'exited', exitCode: 0, limit: null });
    expect(result.stdout).toMatchObject({ bytes: size, truncated: true });
    expect(Buffer.byteLength(result.stdout.preview, 'utf8')).toBeLessThanOrEqual(3 * kit.options.previewBytes);
    const bytes = await readChunkedBytes(kit.payloads, 'ws_sandbox', result.stdout);
    expect(bytes.length).toBe(size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(result.stdout.digest);
  }, 120_000);

  it('kills a command past the output limit and keeps what it wrote', async () => {
    const result = await kit.exec(['yes', 'output line'], { limits: { outputBytes: 2 * MiB } });
    expect(result).toMatchObject({ state: 'killed', limit: 'output' });
    expect(result.stdout.bytes).toBe(2 * MiB);
    expect((await readChunkedBytes(kit.payloads, 'ws_sandbox', result.stdout)).toString('utf8', 0, 12)).toBe('output line\n');
  });

  it('kills the whole process tree within 2 s of a cancel, leaving no process on the host', async () => {
    const marker = '61.4242';
    await writeFile(join(workspace, 'tree.sh'), `sleep ${marker} &\nsleep ${marker} &\nsleep ${marker}\n`);
    const running = kit.runner.run({ execId: 'exec-cancel-tree', workspaceId: 'ws_sandbox', runId: 'run-limits', argv: ['sh', 'tree.sh'], cwd: '.', env: {}, limits: {}, egress: [], secrets: {}, requestedBy: { kind: 'user', id: 'operator' } });
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 3, { what: "the three sleeps to start" });
    const cancelledAt = Date.now();
    expect(kit.runner.cancel('ws_sandbox', 'exec-cancel-tree')).toBe(true);
    const result = await running;
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
    expect(result).toMatchObject({ state: 'killed', limit: 'cancelled' });
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
    expect(await kit.store.get('ws_sandbox', 'exec-cancel-tree')).toMatchObject({ state: 'killed', limit: 'cancelled', result: { limit: 'cancelled' } });
  });

  it('ends a command cancelled while its sandbox is still being set up', async () => {
    const request = { workspaceId: 'ws_sandbox', argv: ['sleep', '30'], cwd: '.', env: {}, limits: {}, egress: [], secrets: {}, requestedBy: { kind: 'user' as const, id: 'operator' } };
    const early = kit.runner.run({ ...request, execId: 'exec-cancel-early' });
    await eventually(() => kit.runner.isRunning('ws_sandbox', 'exec-cancel-early'), { what: 'the exec to be registered' });
    expect(kit.runner.cancel('ws_sandbox', 'exec-cancel-early')).toBe(true);
    const result = await early;
    expect(result).toMatchObject({ state: 'killed', limit: 'cancelled' });
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('refuses secret-like environment names, programs given as paths and limits above the maximum, and runs nothing', async () => {
    await expect(kit.exec(['env'], { env: { AWS_SECRET_ACCESS_KEY: 'x' } })).rejects.toMatchObject({
      code: 'exec_refused',
      issues: [{ path: 'env.AWS_SECRET_ACCESS_KEY', message: 'looks like a secret: give commands secrets through credentials, never the environment' }],
    });
    await expect(kit.exec(['/bin/sh', '-c', 'id'])).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'argv[0]' }] });
    await expect(kit.exec(['true'], { limits: { wallTimeMs: 2 * 3_600_000 } })).rejects.toMatchObject({ code: 'exec_refused', issues: [{ path: 'limits.wallTimeMs', message: '7200000 is above the maximum 3600000' }] });
    expect(await kit.store.list('ws_sandbox', { limit: 200 })).not.toContainEqual(expect.objectContaining({ argv: ['env'] }));
  });
});
