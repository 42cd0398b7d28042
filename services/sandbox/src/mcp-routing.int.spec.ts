import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { BusModule, topology, type Topology } from '@packetagent/bus';
import { EventRegistry, McpServerSpecSchema, registerSandboxEvents, type PinnedMcpTool } from '@packetagent/contracts';
import { EventStoreModule } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, testEnv, type TestBus, type TestDatabase } from '@packetagent/testing';
import { McpCommandsHandler } from './mcp-commands.handler';
import { McpRouting } from './mcp/mcp-routing';
import { testMcpHttpServer, type TestMcpHttpServer } from './mcp/testing/mcp-http-server';
import { SandboxModule } from './sandbox.module';

const ws = 'ws_mcp_routing';

describe(McpRouting.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let dataDir: string;
  let http: TestMcpHttpServer;
  let a: TestingModule;
  let b: TestingModule;
  let echo: PinnedMcpTool;
  const open: TestingModule[] = [];

  async function replica(replicaId: string): Promise<TestingModule> {
    const registry = registerSandboxEvents(new EventRegistry());
    const app = await Test.createTestingModule({
      imports: [
        BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: `sandbox-${replicaId}`, topology: topo, registry }),
        EventStoreModule.forRoot({ databaseUrl: db.url, poolSize: 4, registry }),
        SandboxModule.forRoot({ dataDir, replicaId, allowPrivate: [http.host] }),
      ],
    }).compile();
    await app.init();
    open.push(app);
    return app;
  }

  const server = () => McpServerSpecSchema.parse({ name: 'tools', transport: 'http', url: http.url });
  const call = (app: TestingModule, runId: string, callKey: string, text: string) => app.get(McpCommandsHandler).call({ workspaceId: ws, runId, callKey, server: server(), tool: echo, arguments: { text } });
  const close = (app: TestingModule, runId: string) => app.get(McpCommandsHandler).close({ workspaceId: ws, runId });
  const holder = async (runId: string) => (await db.pool.query<{ replica: string }>('SELECT replica FROM sandbox.mcp_holders WHERE workspace_id = $1 AND run_id = $2', [ws, runId])).rows[0]?.replica;

  beforeAll(async () => {
    db = await createTestDatabase();
    bus = await createTestBus();
    topo = topology(bus.prefix);
    dataDir = await mkdtemp(join(tmpdir(), 'pa-mcp-routing-'));
    http = await testMcpHttpServer();
    a = await replica('a');
    b = await replica('b');
    const listed = await a.get(McpCommandsHandler).list({ workspaceId: ws, server: server() });
    echo = listed.tools.find((tool) => tool.name === 'echo')!;
  });
  afterAll(async () => {
    for (const app of open) await app.close();
    await http.close();
    await bus.cleanup();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("sends a run's calls and close reaching another replica to the replica holding its session", async () => {
    const before = http.sessionsOpened;

    expect(await call(a, 'run-held', 'run-held:c1', 'first')).toMatchObject({ ok: true, preview: 'first' });
    expect(await call(b, 'run-held', 'run-held:c2', 'second')).toMatchObject({ ok: true, preview: 'second' });
    // The holder's memory answers a repeat, wherever it arrives.
    expect(await call(b, 'run-held', 'run-held:c1', 'not sent')).toMatchObject({ ok: true, preview: 'first' });

    expect(http.sessionsOpened).toBe(before + 1);
    expect(await holder('run-held')).toBe('a');
    expect(await close(b, 'run-held')).toEqual({ closed: 1 });
    expect(await holder('run-held')).toBeUndefined();
    await eventually(() => http.openSessions === 0, { what: "a's session to end at the server" });
  });

  it('replaces a holder that no longer answers, and forgets it when the run is closed', async () => {
    await db.pool.query(`INSERT INTO sandbox.mcp_holders (workspace_id, run_id, replica) VALUES ($1, 'run-moved', 'replica-that-died'), ($1, 'run-orphaned', 'replica-that-died')`, [ws]);

    expect(await call(b, 'run-moved', 'run-moved:c1', 'fresh')).toMatchObject({ ok: true, preview: 'fresh' });
    expect(await holder('run-moved')).toBe('b');
    expect(await close(a, 'run-moved')).toEqual({ closed: 1 });
    expect(await holder('run-moved')).toBeUndefined();

    expect(await close(a, 'run-orphaned')).toEqual({ closed: 0 });
    expect(await holder('run-orphaned')).toBeUndefined();
  });

  it("releases this replica's runs when it stops", async () => {
    const c = await replica('c');
    expect(await call(c, 'run-on-c', 'run-on-c:c1', 'held by c')).toMatchObject({ ok: true });
    expect(await holder('run-on-c')).toBe('c');

    await c.close();
    open.splice(open.indexOf(c), 1);

    expect(await holder('run-on-c')).toBeUndefined();
    expect(await call(b, 'run-on-c', 'run-on-c:c2', 'held by b')).toMatchObject({ ok: true, preview: 'held by b' });
    expect(await holder('run-on-c')).toBe('b');
    await close(b, 'run-on-c');
  });
});
