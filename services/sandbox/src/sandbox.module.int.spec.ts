import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { BusModule, CommandBus, topology, type Topology } from '@packetagent/bus';
import { EventRegistry, execLiveSubject, ExecLiveMessageSchema, operatorExecStream, registerSandboxEvents, SandboxCommands, type ExecLiveMessage } from '@packetagent/contracts';
import { EventStoreModule } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, testEnv, type TestBus, type TestDatabase } from '@packetagent/testing';
import type { ExecRunner } from './exec/exec-runner';
import { SandboxCommandsHandler } from './sandbox-commands.handler';
import { SandboxModule } from './sandbox.module';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions, type SandboxModuleOptions } from './sandbox.options';
import { EXEC_RUNNER } from './sandbox.tokens';

const operator = { kind: 'user', id: 'operator@example.com' } as const;
const ws = 'ws_module';

describe('sandbox service over the bus', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let dataDir: string;
  let site: Server;
  let origin: string;
  const replicas: TestingModule[] = [];
  let commands: CommandBus;

  async function replica(replicaId: string, options: Partial<SandboxModuleOptions> = {}): Promise<TestingModule> {
    const registry = registerSandboxEvents(new EventRegistry());
    const app = await Test.createTestingModule({
      imports: [
        BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: `sandbox-${replicaId}`, topology: topo, registry }),
        EventStoreModule.forRoot({ databaseUrl: db.url, poolSize: 4, registry }),
        SandboxModule.forRoot({ dataDir, replicaId, egressOrigins: [origin], allowPrivate: [new URL(origin).host], ...options }),
      ],
    }).compile();
    await app.init();
    replicas.push(app);
    return app;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    bus = await createTestBus();
    topo = topology(bus.prefix);
    dataDir = await mkdtemp(join(tmpdir(), 'pa-sandbox-module-'));
    site = createServer((request, response) => {
      if (request.url === '/data.txt') return void response.end('declared input\n');
      if (request.url === '/page') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<title>Board</title><p>all green</p>');
      response.statusCode = 404;
      response.end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
    commands = new CommandBus(bus.nc, topo);
  });
  afterAll(async () => {
    for (const app of replicas) await app.close();
    site.close();
    await bus.cleanup();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs a command and publishes its output live, in order, ending with the result', async () => {
    await replica('a');
    const live: ExecLiveMessage[] = [];
    const subscription = bus.nc.subscribe(execLiveSubject(bus.prefix, ws, 'exec-live.1'), { callback: (_error, message) => void live.push(ExecLiveMessageSchema.parse(message.json())) });
    const result = await commands.request(SandboxCommands.exec, { execId: 'exec-live.1', workspaceId: ws, argv: ['node', '-e', "console.log('hello'); console.error('oops'); process.exit(3)"], requestedBy: operator }, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ state: 'exited', exitCode: 3, driver: 'bubblewrap', stdout: { preview: 'hello\n' }, stderr: { preview: 'oops\n' } });
    await eventually(() => live.at(-1)?.kind === 'ended', { what: 'the live end' });
    subscription.unsubscribe();
    expect(live.map((message) => message.seq)).toEqual(live.map((_, index) => index));
    expect(live[0]).toMatchObject({ kind: 'started', argv: ['node', '-e', expect.any(String)], driver: 'bubblewrap' });
    expect(live.filter((message) => message.kind === 'output').map((message) => message.kind === 'output' && `${message.stream}:${message.text}`).sort()).toEqual(['stderr:oops\n', 'stdout:hello\n']);
    expect(live.at(-1)).toMatchObject({ kind: 'ended', result: { exitCode: 3 } });

    // Asked again under the same id, it answers what happened without running anything.
    const again = await commands.request(SandboxCommands.exec, { execId: 'exec-live.1', workspaceId: ws, argv: ['node', '-e', 'process.exit(0)'], requestedBy: operator }, { timeoutMs: 30_000 });
    expect(again).toEqual(result);
  });

  it("records an operator's command as events of its own, with who asked, and a run's tool call not (its run records it)", async () => {
    await commands.request(SandboxCommands.exec, { execId: 'exec-audited', workspaceId: ws, argv: ['node', '--version'], env: { CI: 'true' }, requestedBy: operator }, { timeoutMs: 30_000 });
    const events = await db.pool.query<{ type: string; data: Record<string, unknown>; actor: unknown }>(`SELECT type, data, metadata->'actor' AS actor FROM events WHERE stream_id = $1 ORDER BY stream_version`, [operatorExecStream(ws, 'exec-audited')]);
    expect(events.rows.map((row) => [row.type, row.actor])).toEqual([
      ['sandbox.exec_started', operator],
      ['sandbox.exec_ended', operator],
    ]);
    expect(events.rows[0]!.data).toMatchObject({ execId: 'exec-audited', argv: ['node', '--version'], envNames: ['CI'], driver: 'bubblewrap', runId: null });
    expect(events.rows[1]!.data).toMatchObject({ state: 'exited', exitCode: 0, stdout: { bytes: process.version.length + 1 } });
    expect(JSON.stringify(events.rows)).not.toContain('"true"');

    await commands.request(SandboxCommands.exec, { execId: 'run-x:call-1', workspaceId: ws, runId: 'run-x', argv: ['true'], requestedBy: { kind: 'service', id: 'supervisor' } }, { timeoutMs: 30_000 });
    expect((await db.pool.query('SELECT 1 FROM events WHERE stream_id = $1', [operatorExecStream(ws, 'run-x:call-1')])).rowCount).toBe(0);
  });

  it('fetches declared egress GET-only before the command starts and mounts it read-only', async () => {
    const result = await commands.request(
      SandboxCommands.exec,
      { execId: 'exec-egress', workspaceId: ws, argv: ['node', '-e', "const fs = require('fs'); process.stdout.write(fs.readFileSync('/input/egress/data.txt', 'utf8')); try { fs.writeFileSync('/input/egress/x', 'x') } catch (e) { console.log(e.code) }"], egress: [{ url: `${origin}/data.txt` }], requestedBy: operator },
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({ state: 'exited', exitCode: 0, stdout: { preview: 'declared input\nEROFS\n' } });
    expect(result.egress).toEqual([{ url: `${origin}/data.txt`, as: 'data.txt', size: 15, digest: expect.stringMatching(/^[0-9a-f]{64}$/), connectedAddress: '127.0.0.1', status: 200 }]);

    await expect(commands.request(SandboxCommands.exec, { execId: 'exec-egress-refused', workspaceId: ws, argv: ['true'], egress: [{ url: 'https://downloads.example.com/x.tgz' }], requestedBy: operator })).rejects.toMatchObject({
      code: 'exec_refused',
      issues: [{ path: 'egress[0].url', message: 'https://downloads.example.com is not an allowlisted egress origin (PACKETAGENT_SANDBOX_EGRESS_ORIGINS)' }],
    });
  });

  it('forwards a cancel to the replica running the exec', async () => {
    const a = replicas.find((app) => app.get<ResolvedSandboxOptions>(SANDBOX_OPTIONS).replicaId === 'a') ?? (await replica('a'));
    const b = await replica('b');
    const runnerA = a.get<ExecRunner>(EXEC_RUNNER);
    const running = runnerA.run({ execId: 'exec-on-a', workspaceId: ws, argv: ['sleep', '30'], cwd: '.', env: {}, limits: {}, egress: [], secrets: {}, requestedBy: operator });
    await eventually(() => runnerA.isRunning(ws, 'exec-on-a'), { what: 'the exec to start on a' });
    expect(await b.get(SandboxCommandsHandler).cancel({ workspaceId: ws, execId: 'exec-on-a' })).toEqual({ found: true });
    expect(await running).toMatchObject({ state: 'killed', limit: 'cancelled' });
    expect(await b.get(SandboxCommandsHandler).cancel({ workspaceId: ws, execId: 'exec-on-a' })).toEqual({ found: false });
  });

  it('keeps one browser context per run across replicas: actions reaching another replica go to the holder, a gone holder is replaced', async () => {
    const [a, b] = ['a', 'b'].map((id) => replicas.find((app) => app.get<ResolvedSandboxOptions>(SANDBOX_OPTIONS).replicaId === id)!) as [TestingModule, TestingModule];
    const act = (app: TestingModule, runId: string, action: 'navigate' | 'read') =>
      app.get(SandboxCommandsHandler).browserAct({ workspaceId: ws, runId, action, url: `${origin}/page`, allowedUrls: [`${origin}/*`], timeoutMs: 20_000 });
    const holder = async (runId: string) => (await db.pool.query<{ replica: string }>('SELECT replica FROM sandbox.browser_sessions WHERE workspace_id = $1 AND run_id = $2', [ws, runId])).rows[0]?.replica;

    expect(await act(a, 'run-browse', 'navigate')).toMatchObject({ ok: true, title: 'Board' });
    expect(await act(b, 'run-browse', 'read')).toMatchObject({ ok: true, text: expect.stringContaining('all green') });
    expect(await holder('run-browse')).toBe('a');
    expect(await b.get(SandboxCommandsHandler).browserClose({ workspaceId: ws, runId: 'run-browse' })).toEqual({ closed: true });
    expect(await holder('run-browse')).toBeUndefined();

    await db.pool.query(`INSERT INTO sandbox.browser_sessions (workspace_id, run_id, replica) VALUES ($1, 'run-moved', 'replica-that-died')`, [ws]);
    expect(await act(b, 'run-moved', 'navigate')).toMatchObject({ ok: true, title: 'Board' });
    expect(await holder('run-moved')).toBe('b');
    await b.get(SandboxCommandsHandler).browserClose({ workspaceId: ws, runId: 'run-moved' });
  });

  it('ends the record of an exec whose replica is gone instead of leaving it running', async () => {
    await db.pool.query(
      `INSERT INTO sandbox.execs (workspace_id, exec_id, run_id, argv, cwd, state, driver, requested_by, replica, started_at) VALUES ($1, 'exec-orphan', NULL, '["sleep","60"]', '.', 'running', 'bubblewrap', $2, 'replica-that-died', now())`,
      [ws, JSON.stringify(operator)],
    );
    const record = await commands.request(SandboxCommands.get, { workspaceId: ws, execId: 'exec-orphan' });
    expect(record).toMatchObject({ state: 'killed', result: { state: 'killed', message: expect.stringContaining('the sandbox replica running it stopped') } });
    await expect(commands.request(SandboxCommands.get, { workspaceId: 'ws_other', execId: 'exec-orphan' })).rejects.toMatchObject({ code: 'exec_not_found' });
  });

  it('fails closed, naming what to install, when no driver is available', async () => {
    const lonely = await mkdtemp(join(tmpdir(), 'pa-sandbox-nodriver-'));
    const app = await replica('docker-only', { driver: 'docker', dataDir: lonely, docker: { host: `unix://${join(lonely, 'no-engine.sock')}` } });
    const handler = app.get(SandboxCommandsHandler);
    await expect(handler.exec({ execId: 'exec-nowhere', workspaceId: ws, argv: ['true'], cwd: '.', env: {}, limits: {}, egress: [], secrets: {}, requestedBy: operator })).rejects.toMatchObject({
      code: 'sandbox_unavailable',
      message: expect.stringMatching(/no sandbox driver is available \(PACKETAGENT_SANDBOX_DRIVER=docker\), so nothing runs: .*docker: /),
    });
    const status = await handler.status();
    expect(status.driver).toBeNull();
    expect(status.drivers.find((driver) => driver.name === 'bubblewrap')).toMatchObject({ available: true });
  });
});
