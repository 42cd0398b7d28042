import { mcpToolDigest, McpServerSpecSchema, type McpCallResult, type PinnedMcpTool } from '@packetagent/contracts';
import { ToolArgumentsError } from '../../errors';
import { McpCatalogue, mcpFunctionName, type CatalogueServer } from '../../mcp/mcp-catalogue';
import { ToolRegistry } from '../../registry';
import { allowFor, contextFor } from '../../testing/tools.testkit';
import type { McpCallRequest, McpPort } from '../../tool.types';

const answered: McpCallResult = { ok: true, preview: 'created #12', result: null, bytes: 11, error: null, durationMs: 8 };

function recordingPort(result: McpCallResult): McpPort & { requests: McpCallRequest[] } {
  const requests: McpCallRequest[] = [];
  return { requests, call: async (request) => (requests.push(request), result) };
}

function pinned(name: string, annotations: PinnedMcpTool['annotations'] = {}): PinnedMcpTool {
  const tool = { name, description: `${name} in the tracker`, inputSchema: { type: 'object', properties: { title: { type: 'string' } } }, annotations };
  return { ...tool, digest: mcpToolDigest(tool) };
}

function server(fields: { trusted?: boolean; credential?: string }, tools: PinnedMcpTool[]): CatalogueServer {
  return { ...McpServerSpecSchema.parse({ name: 'tracker', transport: 'http', url: 'https://tracker.example.com/mcp', ...fields }), tools } as CatalogueServer;
}

describe('mcp tool', () => {
  const tools = [pinned('create_issue', { destructiveHint: false }), pinned('list_issues', { readOnlyHint: true }), pinned('delete.issue', { destructiveHint: true })];

  it('shows the model only the pinned tools a grant covers, each under its own name with its pinned schema', () => {
    const catalogue = new McpCatalogue([server({}, tools)], ['tracker/create_issue', 'tracker/list_issues']);
    const specs = new ToolRegistry().describe(['http_fetch', 'mcp', 'mcp'], catalogue);
    expect(specs.map((spec) => spec.name)).toEqual(['http_fetch', 'tracker__create_issue', 'tracker__list_issues']);
    expect(specs[1]!.parameters).toEqual(tools[0]!.inputSchema);
    expect(mcpFunctionName('tracker', 'delete.issue')).toMatch(/^tracker__delete_issue_[0-9a-f]{8}$/);
  });

  it('plans a call by its function name as verb call on <server>/<tool>; annotations count only for a trusted server', () => {
    const untrusted = new McpCatalogue([server({ credential: 'tracker_token' }, tools)], ['tracker/*']);
    const planned = new ToolRegistry().plan('call-1', 'tracker__list_issues', { title: 'x' }, untrusted);
    expect(planned).toMatchObject({ tool: 'mcp', verb: 'call', resource: 'tracker/list_issues', mutating: true, idempotentByKey: false, credentials: ['tracker_token'] });
    const trusted = new McpCatalogue([server({ trusted: true }, tools)], ['tracker/*']);
    expect(new ToolRegistry().plan('call-1', 'tracker__list_issues', {}, trusted)).toMatchObject({ mutating: false, idempotentByKey: true });
    expect(new ToolRegistry().plan('call-1', 'tracker__create_issue', {}, trusted)).toMatchObject({ mutating: true, idempotentByKey: false });
  });

  it('plans a pinned tool no grant covers (policy refuses it on the record) and refuses one the version did not pin, however it is named', () => {
    const catalogue = new McpCatalogue([server({}, tools)], ['tracker/list_issues']);
    expect(new ToolRegistry().plan('call-1', 'tracker__create_issue', {}, catalogue)).toMatchObject({ tool: 'mcp', resource: 'tracker/create_issue' });
    expect(() => new ToolRegistry().plan('call-1', 'mcp', { server: 'tracker', tool: 'close_issue', arguments: {} }, catalogue)).toThrow(ToolArgumentsError);
    expect(() => new ToolRegistry().plan('call-1', 'tracker__close_issue', {}, catalogue)).toThrow(ToolArgumentsError);
  });

  it("plans an OAuth server's call with its connection and the URL the token is for, and a computer's stdio server's on that computer", async () => {
    const oauth = { ...McpServerSpecSchema.parse({ name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp', oauth: { credential: 'docs_oauth' } }), tools } as CatalogueServer;
    const planned = new ToolRegistry().plan('call-1', 'docs__list_issues', {}, new McpCatalogue([oauth], ['docs/*']));
    expect(planned).toMatchObject({ credentials: ['docs_oauth'], audiences: { docs_oauth: 'https://docs.example.com/mcp' }, computer: null });

    const remote = { ...McpServerSpecSchema.parse({ name: 'builds', transport: 'stdio', command: 'builds-mcp', computer: 'build-box' }), tools } as CatalogueServer;
    const catalogue = new McpCatalogue([remote], ['builds/*']);
    const onComputer = new ToolRegistry().plan('call-2', 'builds__list_issues', {}, catalogue);
    expect(onComputer).toMatchObject({ credentials: [], computer: 'build-box' });
    const port = recordingPort(answered);
    const sut = new ToolRegistry({ mcp: port });
    expect(await sut.execute(onComputer, allowFor(onComputer), contextFor({ mcp: catalogue }))).toMatchObject({ ok: false, error: { code: 'computer_key_unavailable' } });
    expect(await sut.execute(onComputer, allowFor(onComputer), contextFor({ mcp: catalogue, computerGrant: 'signed.grant' }))).toMatchObject({ ok: true });
    expect(port.requests.map((request) => request.computerGrant)).toEqual(['signed.grant']);
  });

  it('fails closed with mcp_unavailable when no MCP port is configured', async () => {
    const sut = new ToolRegistry();
    const catalogue = new McpCatalogue([server({}, tools)], ['tracker/*']);
    const planned = sut.plan('call-1', 'tracker__create_issue', {}, catalogue);
    expect(await sut.execute(planned, allowFor(planned), contextFor({ mcp: catalogue }))).toMatchObject({ ok: false, error: { code: 'mcp_unavailable' } });
  });

  it('calls the port with the pinned server and tool, the call key and the bearer, and reports a tool error by its code', async () => {
    const catalogue = new McpCatalogue([server({ credential: 'tracker_token' }, tools)], ['tracker/*']);
    const port = recordingPort(answered);
    const sut = new ToolRegistry({ mcp: port });
    const planned = sut.plan('call-1', 'tracker__create_issue', { title: 'Broken build' }, catalogue);
    const ctx = contextFor({ mcp: catalogue, credentials: { tracker_token: 'tok-123456' } });

    const outcome = await sut.execute(planned, allowFor(planned), ctx);
    const failed = await new ToolRegistry({ mcp: recordingPort({ ...answered, ok: false, error: { code: 'mcp_timeout', message: 'no answer in 60000 ms' } }) }).execute(planned, allowFor(planned), ctx);

    expect(port.requests).toEqual([{ workspaceId: 'ws_test', runId: 'run-0001', callKey: 'idem-key-0001', server: McpServerSpecSchema.parse({ name: 'tracker', transport: 'http', url: 'https://tracker.example.com/mcp', credential: 'tracker_token' }), tool: tools[0], arguments: { title: 'Broken build' }, bearer: 'tok-123456' }]);
    expect(outcome).toMatchObject({ ok: true, output: { ok: true, preview: 'created #12', bytes: 11 } });
    expect(failed).toMatchObject({ ok: false, error: { code: 'mcp_timeout', message: 'no answer in 60000 ms' } });
    expect(await sut.execute(planned, allowFor(planned), contextFor({ mcp: catalogue }))).toMatchObject({ ok: false, error: { code: 'credential_unavailable' } });
  });

  it('keeps a small result whole in the output and a large one by its reference', async () => {
    const catalogue = new McpCatalogue([server({}, tools)], ['tracker/*']);
    const planned = new ToolRegistry().plan('call-1', 'tracker__create_issue', { title: 'Broken build' }, catalogue);
    const whole = { content: [{ type: 'text', text: 'created #12' }] };
    const ref = { $payload: { digest: 'a'.repeat(64), size: 4096, mediaType: 'application/json' as const } };

    const small = await new ToolRegistry({ mcp: recordingPort({ ...answered, value: whole }) }).execute(planned, allowFor(planned), contextFor({ mcp: catalogue }));
    const large = await new ToolRegistry({ mcp: recordingPort({ ...answered, result: ref, bytes: 4096 }) }).execute(planned, allowFor(planned), contextFor({ mcp: catalogue }));

    expect(small).toMatchObject({ ok: true, output: { preview: 'created #12', value: whole } });
    expect(small.output).not.toHaveProperty('result');
    expect(large).toMatchObject({ ok: true, output: { preview: 'created #12', result: { digest: 'a'.repeat(64), size: 4096 } } });
    expect(large.output).not.toHaveProperty('value');
  });
});
