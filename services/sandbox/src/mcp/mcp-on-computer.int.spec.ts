import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComputerSpecSchema, McpServerSpecSchema, type ComputerSpec } from '@packetagent/contracts';
import { PostgresPayloadStore } from '@packetagent/eventstore';
import { eventually, hostProcesses, sshdAvailable } from '@packetagent/testing';
import { computerKit, operator, ws, type ComputerKit } from '../computers/testing/computer.testkit';
import { BubblewrapDriver } from '../drivers/bubblewrap/bubblewrap-driver';
import { DriverSelection } from '../drivers/driver-selection';
import { resolveSandboxOptions } from '../sandbox.options';
import { McpSessions } from './mcp-sessions';
import { bundleStdioServer } from './testing/stdio-server-bundle';

const describeWithSshd = sshdAvailable() ? describe : describe.skip;
let runs = 0;

/** A stdio MCP server on a registered computer, started over a real OpenSSH server with the computer's key. */
describeWithSshd('MCP servers on a computer', () => {
  let kit: ComputerKit;
  let root: string;
  let dataDir: string;
  let sut: McpSessions;
  const marker = `mcp-remote-${process.pid}`;

  const computer = (overrides: Partial<ComputerSpec> = {}) =>
    ComputerSpecSchema.parse({
      kind: 'ssh',
      ssh: { host: '127.0.0.1', port: kit.sshd.port, user: kit.sshd.user, hostKeys: [kit.sshd.hostFingerprint()], keyCredential: 'build_key' },
      roots: [root],
      policy: { shell: 'allow', write: 'allow', network: 'allow' },
      ...overrides,
    });
  const server = (name: string, file: string) => McpServerSpecSchema.parse({ name: 'builds', transport: 'stdio', command: 'node', args: [file], computer: name, timeoutMs: 20_000 });

  beforeAll(async () => {
    kit = await computerKit();
    root = await mkdtemp(join(tmpdir(), 'pa-mcp-root-'));
    dataDir = await mkdtemp(join(tmpdir(), 'pa-mcp-remote-'));
    const options = resolveSandboxOptions({ dataDir });
    const drivers = new DriverSelection([new BubblewrapDriver({ scratchDir: options.scratchDir })], 'auto');
    sut = new McpSessions({ drivers, options, payloads: new PostgresPayloadStore(kit.db.pool, { maxBytes: 8 * 1024 * 1024 }), previewBytes: 1024, computers: kit.execs }, options);
    await kit.registry.put(ws, 'build-box', computer(), operator, {});
  });
  afterAll(async () => {
    await sut?.closeAll();
    await kit?.close();
    await rm(root, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  });

  it("lists with the listing key, calls with the run's key grant in the computer's root, and closing the run ends the program there", async () => {
    const file = bundleStdioServer(root, `${marker}-${++runs}.cjs`);
    const spec = server('build-box', file);
    const probesBefore = kit.keyReads.probe;
    const listed = await sut.list({ workspaceId: ws, server: spec });
    expect(listed.tools.map((tool) => tool.name)).toContain('echo');
    expect(kit.keyReads.probe).toBe(probesBefore + 1);
    await eventually(() => hostProcesses(file).length === 0, { what: 'the listing server to end' });

    const echo = listed.tools.find((tool) => tool.name === 'echo')!;
    const redeemsBefore = kit.keyReads.redeem;
    const runId = `run-remote-${runs}`;
    const answer = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:1`, server: spec, tool: echo, arguments: { text: 'from the computer' }, computerGrant: 'a-grant' });
    expect(answer).toMatchObject({ ok: true, preview: 'from the computer' });
    expect(kit.keyReads.redeem).toBe(redeemsBefore + 1);
    // One session: a second call reuses the program already started.
    expect(await sut.call({ workspaceId: ws, runId, callKey: `${runId}:2`, server: spec, tool: echo, arguments: { text: 'again' }, computerGrant: 'b-grant' })).toMatchObject({ ok: true, preview: 'again' });
    expect(kit.keyReads.redeem).toBe(redeemsBefore + 1);
    expect(hostProcesses(file).length).toBeGreaterThan(0);

    expect(await sut.close(ws, runId)).toBe(1);
    await eventually(() => hostProcesses(file).length === 0, { what: 'the server on the computer to end' });
  });

  it('starts nothing on a computer without a key grant, and nothing where its policy denies commands', async () => {
    const file = bundleStdioServer(root, `${marker}-${++runs}.cjs`);
    const listed = await sut.list({ workspaceId: ws, server: server('build-box', file) });
    const echo = listed.tools.find((tool) => tool.name === 'echo')!;
    const ungranted = await sut.call({ workspaceId: ws, runId: `run-remote-${runs}`, callKey: `run-remote-${runs}:1`, server: server('build-box', file), tool: echo, arguments: { text: 'x' } });
    expect(ungranted).toMatchObject({ ok: false, error: { code: 'mcp_unavailable', message: expect.stringContaining('no key was granted') } });

    await kit.registry.put(ws, 'closed-box', computer({ policy: { shell: 'deny' } }), operator, {});
    const denied = await sut.call({ workspaceId: ws, runId: `run-remote-${runs}b`, callKey: `run-remote-${runs}b:1`, server: server('closed-box', file), tool: echo, arguments: { text: 'x' }, computerGrant: 'a-grant' });
    expect(denied).toMatchObject({ ok: false, error: { code: 'mcp_unavailable', message: expect.stringContaining("policy denies commands") } });
    expect(hostProcesses(file)).toEqual([]);
  });
});
