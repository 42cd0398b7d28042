import { createServer, type Server } from 'node:net';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, MCP_INLINE_RESULT_BYTES, McpServerSpecSchema, mcpToolDigest, type JsonValue, type McpServerSpec, type PinnedMcpTool } from '@packetagent/contracts';
import { PostgresPayloadStore } from '@packetagent/eventstore';
import { createTestDatabase, eventually, hostProcesses, type TestDatabase } from '@packetagent/testing';
import { BubblewrapDriver } from '../drivers/bubblewrap/bubblewrap-driver';
import { DriverSelection } from '../drivers/driver-selection';
import { resolveSandboxOptions } from '../sandbox.options';
import type { RunKey } from '../replicas/run-holders';
import { McpSessions, type McpCallRequest } from './mcp-sessions';
import { brokenHttpServer, type BrokenHttpServer } from './testing/broken-http-server';
import { testMcpHttpServer, type TestMcpHttpServer } from './testing/mcp-http-server';
import { bundleStdioServer } from './testing/stdio-server-bundle';

const ws = 'ws_mcp';
let runs = 0;
const nextRun = () => `run-mcp-${process.pid}-${++runs}`;

describe(McpSessions.name, () => {
  let db: TestDatabase;
  let dataDir: string;
  let payloads: PostgresPayloadStore;
  let http: TestMcpHttpServer;
  let broken: BrokenHttpServer;
  let sut: McpSessions;

  const httpSpec = (overrides: Partial<McpServerSpec> = {}) => McpServerSpecSchema.parse({ name: 'tools', transport: 'http', url: http.url, ...overrides });

  function sessions(allowPrivate: string[], idleMs?: number, idleClosed?: (run: RunKey) => Promise<void>): McpSessions {
    const options = resolveSandboxOptions({ dataDir, allowPrivate });
    return new McpSessions({ drivers: new DriverSelection([new BubblewrapDriver({ scratchDir: options.scratchDir })], 'auto'), options, payloads, previewBytes: 1024 }, options, idleMs, idleClosed);
  }

  async function pinned(spec = httpSpec()): Promise<Record<string, PinnedMcpTool>> {
    const listed = await sut.list({ workspaceId: ws, server: spec });
    return Object.fromEntries(listed.tools.map((tool) => [tool.name, tool]));
  }

  const call = (fields: Partial<McpCallRequest> & Pick<McpCallRequest, 'tool' | 'runId'>) =>
    sut.call({ workspaceId: ws, callKey: `${fields.runId}:${Math.random()}`, server: httpSpec(), arguments: {}, ...fields });

  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'pa-mcp-'));
    payloads = new PostgresPayloadStore(db.pool, { maxBytes: 8 * 1024 * 1024 });
    http = await testMcpHttpServer();
    broken = await brokenHttpServer();
    sut = sessions([http.host, broken.host]);
  });
  afterAll(async () => {
    await sut.closeAll();
    await http.close();
    await broken.close();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  describe('over Streamable HTTP', () => {
    it('lists every tool with its digest, the server and the protocol version', async () => {
      const listed = await sut.list({ workspaceId: ws, server: httpSpec() });

      expect(listed.server).toEqual({ name: 'test-tools', version: '1.2.3' });
      expect(listed.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      const echo = listed.tools.find((tool) => tool.name === 'echo')!;
      expect(echo).toMatchObject({ description: 'Answers the text it is given', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', required: ['text'] } });
      for (const tool of listed.tools) expect(tool.digest).toBe(mcpToolDigest(tool));
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['bad_shape', 'big', 'connect', 'count', 'echo', 'fail', 'garbage', 'hang']);
    });

    it('calls a pinned tool, answers a small result whole and sends the bearer', async () => {
      const tools = await pinned();
      http.authorizations.length = 0;

      const result = await call({ runId: nextRun(), tool: tools['echo']!, arguments: { text: 'hello' }, bearer: 'token-1' });

      expect(result).toMatchObject({ ok: true, preview: 'hello', result: null, error: null });
      expect(result.value).toEqual({ content: [{ type: 'text', text: 'hello' }] });
      expect(result.bytes).toBe(Buffer.byteLength(canonicalJson(result.value!), 'utf8'));
      expect(http.authorizations.length).toBeGreaterThan(0);
      expect(new Set(http.authorizations)).toEqual(new Set(['Bearer token-1']));
    });

    it('stores a result above MCP_INLINE_RESULT_BYTES and answers it by reference', async () => {
      const tools = await pinned();
      const text = 'x'.repeat(MCP_INLINE_RESULT_BYTES);

      const result = await call({ runId: nextRun(), tool: tools['echo']!, arguments: { text } });

      expect(result).toMatchObject({ ok: true, preview: text, error: null });
      expect(result.value).toBeUndefined();
      expect(await payloads.getJson(ws, result.result!)).toEqual({ content: [{ type: 'text', text }] });
      expect(result.bytes).toBe(result.result!.$payload.size);
      expect(result.bytes).toBeGreaterThan(MCP_INLINE_RESULT_BYTES);
    });

    it('reuses the run\'s session and answers a repeated call key with the first result', async () => {
      const tools = await pinned();
      const runId = nextRun();
      const before = http.state.counted;

      const first = await call({ runId, callKey: `${runId}:c1`, tool: tools['count']!, arguments: {} });
      const again = await call({ runId, callKey: `${runId}:c1`, tool: tools['count']!, arguments: {} });
      const other = await call({ runId, callKey: `${runId}:c2`, tool: tools['count']!, arguments: {} });

      expect(again).toEqual(first);
      expect(first.preview).toBe(String(before + 1));
      expect(other.preview).toBe(String(before + 2));
      expect(http.state.counted).toBe(before + 2);
    });

    it('refuses a call whose pinned tool changed on the server, naming what changed', async () => {
      const tools = await pinned();
      http.state.echoTakesLanguage = true;
      try {
        const result = await call({ runId: nextRun(), tool: tools['echo']!, arguments: { text: 'hello' } });

        expect(result).toMatchObject({ ok: false, result: null, error: { code: 'mcp_tool_changed', message: expect.stringContaining('changed the tool echo since it was pinned: its input schema differ') } });
      } finally {
        http.state.echoTakesLanguage = false;
      }
    });

    it('refuses a pinned tool the server no longer lists, and a pin whose digest does not hold', async () => {
      const tools = await pinned();
      const gone = { ...tools['echo']!, name: 'echo_v0' };
      const runId = nextRun();

      const removed = await call({ runId, tool: { ...gone, digest: mcpToolDigest(gone) }, arguments: { text: 'x' } });
      const forged = await call({ runId, tool: { ...tools['echo']!, description: 'something else' }, arguments: { text: 'x' } });

      expect(removed.error).toMatchObject({ code: 'mcp_tool_changed', message: expect.stringContaining('no longer lists the tool echo_v0') });
      expect(forged.error).toMatchObject({ code: 'mcp_tool_changed', message: expect.stringContaining('is not the digest of its fields') });
    });

    it('refuses arguments the pinned schema does not accept, with their paths, before sending', async () => {
      const tools = await pinned();
      const before = http.authorizations.length;

      const result = await call({ runId: nextRun(), tool: tools['echo']!, arguments: { text: 5 as unknown as JsonValue } });

      expect(result.error).toMatchObject({ code: 'mcp_invalid_arguments', message: expect.stringContaining('text: must be string') });
      // The session opened and listed; no tools/call went out.
      expect(http.authorizations.length - before).toBeLessThanOrEqual(4);
    });

    it('answers a result the server flagged as an error as not ok, with its text', async () => {
      const tools = await pinned();

      const result = await call({ runId: nextRun(), tool: tools['fail']!, arguments: {} });

      expect(result).toMatchObject({ ok: false, preview: 'the disk is full', error: { code: 'mcp_tool_error', message: 'the disk is full' } });
      expect(result.value).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the disk is full' }] });
    });

    it('refuses a 20 MB result while it arrives', async () => {
      const tools = await pinned();

      const result = await call({ runId: nextRun(), tool: tools['big']!, arguments: { bytes: 20_000_000 } });

      expect(result).toMatchObject({ ok: false, result: null, error: { code: 'mcp_result_too_large', message: expect.stringContaining('refused while arriving') } });
    });

    it('refuses a result above maxResultBytes that fits the wire allowance', async () => {
      const spec = httpSpec({ maxResultBytes: 1024 });
      const tools = await pinned(spec);

      const result = await call({ runId: nextRun(), server: spec, tool: tools['big']!, arguments: { bytes: 4096 } });

      expect(result.error).toMatchObject({ code: 'mcp_result_too_large', message: expect.stringContaining('above the limit of 1024 bytes') });
    });

    it('cancels a call past its timeout and the session goes on', async () => {
      const spec = httpSpec({ timeoutMs: 500 });
      const tools = await pinned(spec);
      const runId = nextRun();

      const result = await call({ runId, server: spec, tool: tools['hang']!, arguments: {} });
      const next = await call({ runId, server: spec, tool: tools['echo']!, arguments: { text: 'still here' } });

      expect(result).toMatchObject({ ok: false, error: { code: 'mcp_timeout', message: 'tools did not answer the call within 500 ms; the request was cancelled' } });
      expect(result.durationMs).toBeGreaterThanOrEqual(450);
      expect(next).toMatchObject({ ok: true, preview: 'still here' });
    });

    it('answers a result of the wrong shape, which the SDK server refuses to send, as a protocol error', async () => {
      const tools = await pinned();

      const result = await call({ runId: nextRun(), tool: tools['bad_shape']!, arguments: {} });

      expect(result.error).toMatchObject({ code: 'mcp_protocol_error', message: expect.stringContaining('Invalid tools/call result') });
    });

    it('answers invalid JSON-RPC, a malformed event and a server that never answers initialize precisely', async () => {
      const tools = await pinned();
      const at = (path: string, timeoutMs = 60_000) => httpSpec({ url: `${broken.origin}${path}`, timeoutMs });

      const wrongShape = await call({ runId: nextRun(), server: at('/wrong-shape'), tool: tools['echo']!, arguments: { text: 'x' } });
      const badEvent = await call({ runId: nextRun(), server: at('/bad-event'), tool: tools['echo']!, arguments: { text: 'x' } });
      const silent = await call({ runId: nextRun(), server: at('/silent', 400), tool: tools['echo']!, arguments: { text: 'x' } });

      expect(wrongShape.error).toMatchObject({ code: 'mcp_protocol_error', message: expect.stringContaining('wrong shape') });
      expect(badEvent.error).toMatchObject({ code: 'mcp_protocol_error', message: expect.stringContaining('invalid JSON') });
      expect(silent.error).toMatchObject({ code: 'mcp_timeout', message: 'tools did not answer initialize within 400 ms (the call\'s whole time limit)' });
    });

    it('closes a run\'s sessions once they have been idle for idleMs, never while a call runs', async () => {
      const tools = await pinned();
      const heard: RunKey[] = [];
      const idle = sessions([http.host], 200, async (run) => void heard.push(run));
      const runId = nextRun();

      const hanging = idle.call({ workspaceId: ws, runId, callKey: 'h', server: httpSpec({ timeoutMs: 700 }), tool: tools['hang']!, arguments: {} });
      await eventually(async () => (await hanging).error?.code === 'mcp_timeout', { what: 'the hanging call to time out' });
      expect(idle.openRuns).toBe(1);
      await eventually(() => heard.length === 1, { what: 'the idle run to be closed' });
      expect(idle.openRuns).toBe(0);
      expect(heard).toEqual([{ workspaceId: ws, runId }]);
      await idle.closeAll();
    });

    it('refuses a loopback server that is not allowlisted, without connecting', async () => {
      const tools = await pinned();
      const strict = sessions([]);
      const before = http.authorizations.length;

      const result = await strict.call({ workspaceId: ws, runId: nextRun(), callKey: 'k', server: httpSpec(), tool: tools['echo']!, arguments: { text: 'x' } });
      await strict.closeAll();

      expect(result.error).toMatchObject({ code: 'mcp_unavailable', message: expect.stringContaining('destination_not_allowed') });
      expect(http.authorizations.length).toBe(before);
    });
  });

  describe('over stdio inside the sandbox', () => {
    let listener: Server;
    let listenerPort: number;
    let accepted = 0;
    const marker = `mcp-stdio-${process.pid}`;

    async function stdioRun(): Promise<{ runId: string; spec: ReturnType<typeof McpServerSpecSchema.parse> }> {
      const runId = nextRun();
      const workspace = join(dataDir, 'runs', runId, 'workspace');
      await mkdir(workspace, { recursive: true });
      const file = bundleStdioServer(workspace, `${marker}-${runId}.cjs`);
      return { runId, spec: McpServerSpecSchema.parse({ name: 'local', transport: 'stdio', command: 'node', args: [file], timeoutMs: 20_000 }) };
    }

    /** The stdio server's tools as a version would pin them (the HTTP server runs the same tool set). */
    async function stdioTools(): Promise<Record<string, PinnedMcpTool>> {
      return pinned();
    }

    beforeAll(async () => {
      listener = createServer((socket) => {
        accepted++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
      listenerPort = (listener.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

    it('calls a tool of a server the sandbox runs, and closing the run ends its process', async () => {
      const { runId, spec } = await stdioRun();
      const tools = await stdioTools();

      const result = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:1`, server: spec, tool: tools['echo']!, arguments: { text: 'from the sandbox' } });

      expect(result).toMatchObject({ ok: true, preview: 'from the sandbox' });
      expect(hostProcesses(`${marker}-${runId}`).length).toBeGreaterThan(0);
      expect(await sut.close(ws, runId)).toBe(1);
      await eventually(() => hostProcesses(`${marker}-${runId}`).length === 0, { what: 'the stdio server to end' });
    });

    it('gives the server no network: a TCP connection to a port the host listens on fails', async () => {
      const { runId, spec } = await stdioRun();
      const tools = await stdioTools();
      const external = Object.values(networkInterfaces())
        .flat()
        .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;

      const loopback = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:lo`, server: spec, tool: tools['connect']!, arguments: { host: '127.0.0.1', port: listenerPort } });
      const outside = external ? await sut.call({ workspaceId: ws, runId, callKey: `${runId}:ext`, server: spec, tool: tools['connect']!, arguments: { host: external, port: listenerPort } }) : null;
      await sut.close(ws, runId);

      expect(loopback).toMatchObject({ ok: true, preview: 'failed: ECONNREFUSED' });
      if (outside) expect(outside.preview).toMatch(/^failed: (ENETUNREACH|EHOSTUNREACH|timeout)$/);
      expect(accepted).toBe(0);
    });

    it('answers a line that is not JSON-RPC as a protocol error, stops the server, and the next call starts another', async () => {
      const { runId, spec } = await stdioRun();
      const tools = await stdioTools();

      const broke = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:g`, server: spec, tool: tools['garbage']!, arguments: {} });
      const next = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:e`, server: spec, tool: tools['echo']!, arguments: { text: 'again' } });
      await sut.close(ws, runId);

      expect(broke.error).toMatchObject({ code: 'mcp_protocol_error', message: expect.stringContaining('a line on stdout that is not JSON-RPC; the server was stopped') });
      expect(next).toMatchObject({ ok: true, preview: 'again' });
    });

    it('answers a result of the wrong shape as a protocol error', async () => {
      const { runId, spec } = await stdioRun();
      const tools = await stdioTools();

      const result = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:shape`, server: spec, tool: tools['bad_shape']!, arguments: {} });
      await sut.close(ws, runId);

      expect(result.error).toMatchObject({ code: 'mcp_protocol_error', message: 'local answered with the wrong shape: content: Invalid input: expected array, received string' });
    });

    it('refuses a 20 MB result while it arrives and stops the server', async () => {
      const { runId, spec } = await stdioRun();
      const tools = await stdioTools();

      const result = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:big`, server: spec, tool: tools['big']!, arguments: { bytes: 20_000_000 } });

      expect(result.error).toMatchObject({ code: 'mcp_result_too_large', message: expect.stringContaining('refused while arriving and the server was stopped') });
      await eventually(() => hostProcesses(`${marker}-${runId}`).length === 0, { what: 'the stdio server to end' });
      await sut.close(ws, runId);
    });

    it('times out a server that never answers initialize, and ends its process', async () => {
      const runId = nextRun();
      const spec = McpServerSpecSchema.parse({ name: 'mute', transport: 'stdio', command: 'sleep', args: [`1000.${process.pid}${runs}`], timeoutMs: 500 });
      const tools = await stdioTools();

      const result = await sut.call({ workspaceId: ws, runId, callKey: `${runId}:1`, server: spec, tool: tools['echo']!, arguments: { text: 'x' } });

      expect(result.error).toEqual({ code: 'mcp_timeout', message: 'mute did not answer initialize within 500 ms (the call\'s whole time limit)' });
      await eventually(() => hostProcesses(`sleep 1000.${process.pid}${runs}`).length === 0, { what: 'the mute server to end' });
      await sut.close(ws, runId);
    });
  });
});
