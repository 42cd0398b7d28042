import type { McpCallResult } from '@packetagent/contracts';
import { ToolRegistry } from '../../registry';
import { allowFor, contextFor } from '../../testing/tools.testkit';
import type { McpCallRequest, McpPort } from '../../tool.types';

const answered: McpCallResult = { ok: true, preview: 'created #12', result: null, bytes: 11, error: null, durationMs: 8 };

function recordingPort(result: McpCallResult): McpPort & { requests: McpCallRequest[] } {
  const requests: McpCallRequest[] = [];
  return { requests, call: async (request) => (requests.push(request), result) };
}

describe('mcp tool', () => {
  const args = { server: 'tracker', tool: 'create_issue', arguments: { title: 'Broken build' } };

  it('plans a call as verb call on <server>/<tool>, mutating and not idempotent by key', () => {
    const planned = new ToolRegistry().plan('call-1', 'mcp', args);

    expect(planned).toMatchObject({ tool: 'mcp', verb: 'call', resource: 'tracker/create_issue', mutating: true, idempotentByKey: false, credentials: [] });
  });

  it('fails closed with mcp_unavailable when no MCP port is configured', async () => {
    const sut = new ToolRegistry();
    const planned = sut.plan('call-1', 'mcp', args);

    const outcome = await sut.execute(planned, allowFor(planned), contextFor());

    expect(outcome).toMatchObject({ ok: false, error: { code: 'mcp_unavailable' } });
  });

  it('calls the port with the run, the call key and the arguments, and reports a tool error by its code', async () => {
    const port = recordingPort(answered);
    const sut = new ToolRegistry({ mcp: port });
    const planned = sut.plan('call-1', 'mcp', args);

    const outcome = await sut.execute(planned, allowFor(planned), contextFor());
    const failed = await new ToolRegistry({ mcp: recordingPort({ ...answered, ok: false, error: { code: 'mcp_timeout', message: 'no answer in 60000 ms' } }) }).execute(planned, allowFor(planned), contextFor());

    expect(port.requests).toEqual([{ workspaceId: 'ws_test', runId: 'run-0001', callKey: 'idem-key-0001', server: 'tracker', tool: 'create_issue', arguments: { title: 'Broken build' } }]);
    expect(outcome).toMatchObject({ ok: true, output: { ok: true, preview: 'created #12', bytes: 11 } });
    expect(failed).toMatchObject({ ok: false, error: { code: 'mcp_timeout', message: 'no answer in 60000 ms' } });
  });
});
