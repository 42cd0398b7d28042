import { mcpToolDigest, type PinnedMcpTool } from '@packetagent/contracts';
import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { mcpTools, PINNED_NOTE } from './mcp-tools';

// Answers shaped as the gateway's worker routes return them (IntakeCommands.getVersion in
// libs/contracts, the definition as stored with each server's tools pinned): these tests cover the
// requests the command makes, what it prints and its exit codes.

const WORKERS = '/api/v1/workspaces/ws_demo/workers';
const WORKER = { id: 'wk_1', name: 'issue-triage', description: '', latestVersion: 3, createdAt: '2026-12-01T10:00:00.000Z' };
const VERSION_DIGEST = 'a'.repeat(64);

function pinned(name: string, annotations: PinnedMcpTool['annotations'] = {}): PinnedMcpTool {
  const tool = { name, description: `${name} tool`, inputSchema: { type: 'object' }, annotations };
  return { ...tool, digest: mcpToolDigest(tool) };
}

const listIssues = pinned('list_issues', { readOnlyHint: true });
const deleteIssue = pinned('delete_issue', { destructiveHint: true });
const createIssue = pinned('create_issue', { idempotentHint: true });
const search = pinned('search', { readOnlyHint: true, title: 'Search notes' });
const write = pinned('write_note', { idempotentHint: true });

const definition = {
  apiVersion: 'packetagent/v1',
  kind: 'Worker',
  name: 'issue-triage',
  mcp: [
    { name: 'tracker', transport: 'http', url: 'https://mcp.example.com/mcp', credential: 'tracker_token', trusted: false, timeoutMs: 60_000, maxResultBytes: 4_194_304, tools: [listIssues, deleteIssue, createIssue] },
    { name: 'notes', transport: 'stdio', command: 'notes-mcp', args: ['--dir', '/srv/my notes'], trusted: true, timeoutMs: 30_000, maxResultBytes: 1_048_576, tools: [search, write] },
    { name: 'empty', transport: 'stdio', command: 'empty-mcp', args: [], trusted: false, timeoutMs: 60_000, maxResultBytes: 4_194_304, tools: [] },
  ],
  tools: [
    { tool: 'mcp', verbs: ['call'], resources: ['tracker/*'], approval: 'never', credentials: ['tracker_token'] },
    { tool: 'mcp', verbs: ['call'], resources: ['tracker/delete_issue'], approval: 'first_use', credentials: [] },
    { tool: 'mcp', verbs: ['call'], resources: ['notes/search'], approval: 'first_use', credentials: [] },
    { tool: 'read_file', verbs: ['read'], resources: ['**'], approval: 'never', credentials: [] },
  ],
};

function version(number: number, body: Record<string, unknown> = definition) {
  return { workerId: 'wk_1', version: number, digest: VERSION_DIGEST, definition: body, createdAt: '2026-12-01T10:05:00.000Z' };
}

describe(mcpTools.name, () => {
  let api: CliApi;

  beforeAll(async () => {
    api = await new CliApi().start();
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, detail: 'no such route' } };
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.routes = {};
    api.json('GET', WORKERS, 200, { items: [WORKER], nextCursor: null });
  });

  it('reads the latest version and prints each server, then each pinned tool with its digest prefix, hints, grant and what policy assumes', async () => {
    api.json('GET', `${WORKERS}/wk_1/versions`, 200, { items: [1, 2, 3].map((n) => ({ workerId: 'wk_1', version: n, digest: VERSION_DIGEST, createdAt: '2026-12-01T10:05:00.000Z' })) });
    api.json('GET', `${WORKERS}/wk_1/versions/3`, 200, version(3));

    const answer = await api.cli(['mcp', 'tools', 'issue-triage']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(api.seen.map((request) => `${request.method} ${request.url}`)).toEqual([`GET ${WORKERS}`, `GET ${WORKERS}/wk_1/versions`, `GET ${WORKERS}/wk_1/versions/3`]);
    const d = (tool: PinnedMcpTool) => tool.digest.slice(0, 12);
    expect(answer.stdout.split('\n')).toEqual([
      `worker issue-triage (wk_1) version 3 digest sha256:${VERSION_DIGEST}`,
      PINNED_NOTE,
      '',
      'tracker: http https://mcp.example.com/mcp, untrusted: its annotations do not loosen policy, credential tracker_token',
      `  list_issues   ${d(listIssues)}  read-only    granted by mcp:tracker/*             mutating, not idempotent (untrusted server); no approval`,
      `  delete_issue  ${d(deleteIssue)}  destructive  granted by mcp:tracker/delete_issue  mutating, not idempotent (untrusted server); a person approves every call (destructive)`,
      `  create_issue  ${d(createIssue)}  idempotent   granted by mcp:tracker/*             mutating, not idempotent (untrusted server); no approval`,
      '',
      'notes: stdio notes-mcp --dir "/srv/my notes", trusted',
      `  search      ${d(search)}  read-only   granted by mcp:notes/search  read-only, idempotent; approved by a person on first use`,
      `  write_note  ${d(write)}  idempotent  not granted                  denied: no grant covers it`,
      '',
      'empty: stdio empty-mcp, untrusted: its annotations do not loosen policy',
      '  (no tools: the server listed none when the version was created)',
      '',
    ]);
  });

  it('reads the version given by --version and, with --json, prints the same as JSON', async () => {
    api.json('GET', `${WORKERS}/wk_1/versions/2`, 200, version(2));

    const answer = await api.cli(['--json', 'mcp', 'tools', 'wk_1', '--version', '2']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(api.seen.map((request) => request.url)).toEqual([WORKERS, `${WORKERS}/wk_1/versions/2`]);
    const printed = JSON.parse(answer.stdout) as { version: number; note: string; servers: Array<Record<string, unknown> & { tools: Array<Record<string, unknown>> }> };
    expect(printed.version).toBe(2);
    expect(printed.note).toBe(PINNED_NOTE);
    expect(printed.servers.map((server) => [server['name'], server['transport'], server['url'], server['command'], server['args'], server['trusted']])).toEqual([
      ['tracker', 'http', 'https://mcp.example.com/mcp', null, [], false],
      ['notes', 'stdio', null, 'notes-mcp', ['--dir', '/srv/my notes'], true],
      ['empty', 'stdio', null, 'empty-mcp', [], false],
    ]);
    expect(printed.servers[0]!.tools[1]).toEqual({
      name: 'delete_issue',
      description: 'delete_issue tool',
      digest: deleteIssue.digest,
      annotations: { destructiveHint: true },
      grant: 'mcp:tracker/delete_issue',
      policy: { callable: true, mutating: true, idempotent: false, approval: 'always', summary: 'mutating, not idempotent (untrusted server); a person approves every call (destructive)' },
    });
    expect(printed.servers[1]!.tools.map((tool) => [tool['name'], tool['grant'], tool['policy']])).toEqual([
      ['search', 'mcp:notes/search', { callable: true, mutating: false, idempotent: true, approval: 'first_use', summary: 'read-only, idempotent; approved by a person on first use' }],
      ['write_note', null, { callable: false, mutating: true, idempotent: true, approval: null, summary: 'denied: no grant covers it' }],
    ]);
  });

  it('says so when the version declares no MCP servers', async () => {
    api.json('GET', `${WORKERS}/wk_1/versions/1`, 200, version(1, { apiVersion: 'packetagent/v1', kind: 'Worker', name: 'issue-triage', tools: [] }));

    const answer = await api.cli(['mcp', 'tools', 'issue-triage', '--version', '1']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stdout).toBe(`worker issue-triage (wk_1) version 1 digest sha256:${VERSION_DIGEST}\nno MCP servers declared\n`);
  });

  it('exits 1 naming the worker when it is unknown or has no version yet, and with the problem when the version is absent', async () => {
    const unknown = await api.cli(['mcp', 'tools', 'nope']);
    expect(unknown.code).toBe(ExitCode.failure);
    expect(unknown.stderr).toBe('error: no worker named or identified "nope" in this workspace\n');

    api.json('GET', `${WORKERS}/wk_1/versions`, 200, { items: [] });
    const none = await api.cli(['mcp', 'tools', 'issue-triage']);
    expect(none.code).toBe(ExitCode.failure);
    expect(none.stderr).toContain('worker issue-triage has no versions yet');

    api.json('GET', `${WORKERS}/wk_1/versions/9`, 404, { type: 'urn:packetagent:problem:not_found', title: 'Not Found', status: 404, detail: 'worker wk_1 has no version 9', code: 'not_found' });
    const absent = await api.cli(['mcp', 'tools', 'issue-triage', '--version', '9']);
    expect(absent.code).toBe(ExitCode.failure);
    expect(absent.stderr).toContain('worker wk_1 has no version 9');
  });

  it('refuses a --version that is not a positive integer without asking the API', async () => {
    const answer = await api.cli(['mcp', 'tools', 'issue-triage', '--version', '0']);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stderr).toContain('must be a positive integer');
    expect(api.seen).toEqual([]);
  });
});
