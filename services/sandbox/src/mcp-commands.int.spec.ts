import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { BusModule, CommandBus, topology, type Topology } from '@packetagent/bus';
import { EventRegistry, McpCommands, registerSandboxEvents } from '@packetagent/contracts';
import { EventStoreModule } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, testEnv, type TestBus, type TestDatabase } from '@packetagent/testing';
import { McpCommandsHandler } from './mcp-commands.handler';
import { testMcpHttpServer, type TestMcpHttpServer } from './mcp/testing/mcp-http-server';
import { SandboxModule } from './sandbox.module';

const ws = 'ws_mcp_bus';

describe(McpCommandsHandler.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let dataDir: string;
  let http: TestMcpHttpServer;
  let app: TestingModule;
  let commands: CommandBus;

  beforeAll(async () => {
    db = await createTestDatabase();
    bus = await createTestBus();
    topo = topology(bus.prefix);
    dataDir = await mkdtemp(join(tmpdir(), 'pa-mcp-bus-'));
    http = await testMcpHttpServer();
    const registry = registerSandboxEvents(new EventRegistry());
    app = await Test.createTestingModule({
      imports: [
        BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: 'sandbox-mcp', topology: topo, registry }),
        EventStoreModule.forRoot({ databaseUrl: db.url, poolSize: 4, registry }),
        SandboxModule.forRoot({ dataDir, replicaId: 'mcp', allowPrivate: [http.host] }),
      ],
    }).compile();
    await app.init();
    commands = new CommandBus(bus.nc, topo);
  });
  afterAll(async () => {
    await app.close();
    await http.close();
    await bus.cleanup();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('lists, calls a pinned tool in the run\'s session, and closes the run\'s sessions over the bus', async () => {
    const server = { name: 'tools', transport: 'http' as const, url: http.url };
    const listed = await commands.request(McpCommands.list, { workspaceId: ws, server }, { timeoutMs: 30_000 });
    const echo = listed.tools.find((tool) => tool.name === 'echo')!;

    const result = await commands.request(McpCommands.call, { workspaceId: ws, runId: 'run-bus', callKey: 'run-bus:c1', server, tool: echo, arguments: { text: 'over the bus' }, bearer: 'secret-token' }, { timeoutMs: 30_000 });

    expect(result).toMatchObject({ ok: true, preview: 'over the bus', result: null, error: null });
    expect(result.value).toEqual({ content: [{ type: 'text', text: 'over the bus' }] });
    expect(http.authorizations).toContain('Bearer secret-token');
    expect(await commands.request(McpCommands.close, { workspaceId: ws, runId: 'run-bus' })).toEqual({ closed: 1 });
    expect(await commands.request(McpCommands.close, { workspaceId: ws, runId: 'run-bus' })).toEqual({ closed: 0 });
  });
});
