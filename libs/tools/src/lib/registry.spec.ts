import { canonicalJson, sha256Hex, TOOL_NAMES, ValidationError } from '@packetagent/contracts';
import { ToolAbortedError, ToolArgumentsError, ToolNotAuthorizedError } from './errors';
import { ToolRegistry } from './registry';
import { allowFor, contextFor } from './testing/tools.testkit';

function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the action to throw');
}

describe(ToolRegistry.name, () => {
  const sut = new ToolRegistry();

  it('refuses a configuration outside its rules with a ValidationError naming the setting', () => {
    expect(() => new ToolRegistry({ config: { httpTimeoutMs: -1 } })).toThrow(ValidationError);
    expect(() => new ToolRegistry({ config: { httpTimeoutMs: -1 } })).toThrow(/httpTimeoutMs/);
  });

  describe('describe', () => {
    it('returns name, description and a JSON Schema object for every known tool', () => {
      const specs = sut.describe(TOOL_NAMES);

      // `mcp` stands for the run's MCP tools, none here.
      expect(specs.map((spec) => spec.name)).toEqual(TOOL_NAMES.filter((name) => name !== 'mcp'));
      for (const spec of specs) {
        expect(spec.description.length).toBeGreaterThan(20);
        expect(spec.parameters).toMatchObject({ type: 'object', additionalProperties: false });
        expect(spec.parameters).not.toHaveProperty('$schema');
      }
    });

    it('shows optional arguments with defaults as not required', () => {
      const [spec] = sut.describe(['http_fetch']);

      expect(spec!.parameters['required']).toEqual(['url']);
    });
  });

  describe('plan', () => {
    it('derives verb, resource, effect flags and digest from the arguments', () => {
      const planned = sut.plan('call-1', 'http_fetch', { url: 'https://API.example.com/v1/x?q=1#frag', method: 'PUT', body: { a: 1 } });

      expect(planned).toMatchObject({
        callId: 'call-1',
        tool: 'http_fetch',
        verb: 'PUT',
        resource: 'https://api.example.com/v1/x?q=1',
        mutating: true,
        idempotentByKey: true,
        credentials: [],
        control: false,
      });
      expect(planned.callDigest).toBe(
        sha256Hex(canonicalJson({ tool: 'http_fetch', verb: 'PUT', resource: 'https://api.example.com/v1/x?q=1', redactedArgs: planned.redactedArgs })),
      );
    });

    it('gives the same digest to the same call and different digests to different bodies', () => {
      const long = 'x'.repeat(5000);
      const a = sut.plan('a', 'http_fetch', { url: 'https://api.example.com/', method: 'POST', body: `${long}1` });
      const b = sut.plan('b', 'http_fetch', { url: 'https://api.example.com/', method: 'POST', body: `${long}1` });
      const c = sut.plan('c', 'http_fetch', { url: 'https://api.example.com/', method: 'POST', body: `${long}2` });

      expect(a.callDigest).toBe(b.callDigest);
      expect(c.callDigest).not.toBe(a.callDigest);
      expect(JSON.stringify(a.redactedArgs).length).toBeLessThan(2000);
    });

    it('names every invalid argument with its path when the arguments fail the schema', () => {
      const failure = thrownBy(() => sut.plan('c', 'http_fetch', { url: 'ftp://x', method: 'FETCH', headers: { 'x-a': 1 }, extra: true }));

      expect(failure).toBeInstanceOf(ToolArgumentsError);
      expect(failure).toMatchObject({ code: 'tool_arguments_invalid', tool: 'http_fetch' });
      expect((failure as ToolArgumentsError).issues.map((issue) => issue.path).sort()).toEqual(['extra', 'headers.x-a', 'method', 'url']);
      expect((failure as Error).message).toContain('url: the scheme must be http or https');
      expect((failure as Error).message).toContain('extra: unknown key');
    });

    it('names the nested path of a cross-field rule', () => {
      expect(() => sut.plan('c', 'http_fetch', { url: 'https://a.example.com/', auth: { credential: 'tok', scheme: 'header' } })).toThrow(/auth\.header: required when scheme is "header"/);
      expect(() => sut.plan('c', 'files', { op: 'write', path: 'a.txt' })).toThrow(/content: required for op "write"/);
    });

    it('refuses userinfo in a URL and headers the tool sets itself', () => {
      expect(() => sut.plan('c', 'http_fetch', { url: 'https://user:pw@api.example.com/' })).toThrow(/url: credentials in the URL are not allowed/);
      expect(() => sut.plan('c', 'http_fetch', { url: 'https://api.example.com/', headers: { Host: 'internal' } })).toThrow(/headers\.Host: this header is set by the tool/);
      expect(() => sut.plan('c', 'http_fetch', { url: 'https://api.example.com/', headers: { 'X-Bad': 'a\r\nInjected: 1' } })).toThrow(/must not contain CR, LF or NUL/);
      expect(() => sut.plan('c', 'http_fetch', { url: 'https://api.example.com/', body: 'x' })).toThrow(/body: a GET request has no body/);
    });

    it('refuses an unknown tool as an argument error listing the known tools', () => {
      expect(() => sut.plan('c', 'shell', {})).toThrow(/unknown tool "shell"; known tools: http_fetch/);
    });

    it('marks control tools with no verb and no resource', () => {
      const planned = sut.plan('c', 'finish', { summary: 'done' });

      expect(planned).toMatchObject({ control: true, verb: '', resource: null, mutating: false, credentials: [] });
    });

    it('extracts resources in the form grants are written in', () => {
      expect(sut.plan('1', 'files', { op: 'read', path: './src//a/../b.ts' }).resource).toBe('src/b.ts');
      expect(sut.plan('2', 'files', { op: 'search', path: '.', pattern: 'x' }).resource).toBe('**');
      expect(sut.plan('3', 'files', { op: 'search', path: 'docs', pattern: 'x' })).toMatchObject({ resource: 'docs/**', verb: 'read' });
      expect(sut.plan('4', 'files', { op: 'edit', path: 'a.md', find: 'a', replace: 'b' })).toMatchObject({ verb: 'write', mutating: true, idempotentByKey: true });
      expect(sut.plan('5', 'slack_post', { channel: '#Ops', text: 'hi', credential: 'slack_ops' })).toMatchObject({ resource: '#ops', verb: 'post', idempotentByKey: false, credentials: ['slack_ops'] });
      expect(sut.plan('6', 'github_api', { method: 'POST', path: '/repos/o/r/issues', credential: 'gh' })).toMatchObject({ resource: 'https://api.github.com/repos/o/r/issues', idempotentByKey: false });
      expect(sut.plan('7', 'git', { op: 'status', url: 'https://github.com/acme/widgets.git' })).toMatchObject({ resource: 'https://github.com/acme/widgets.git', mutating: false });
      expect(sut.plan('8', 'email_send', { to: 'Ops@Example.com', subject: 's', body: 'b' }).resource).toBe('ops@example.com');
      expect(sut.plan('9', 'run_command', { command: 'npm   test' }).resource).toBe('npm test');
    });

    it('refuses workspace paths that escape or are absolute', () => {
      expect(() => sut.plan('c', 'files', { op: 'read', path: '../x' })).toThrow(/path: .*escapes the run workspace/);
      expect(() => sut.plan('c', 'files', { op: 'read', path: '/etc/passwd' })).toThrow(/path: .*absolute paths are not allowed/);
      expect(() => sut.plan('c', 'files', { op: 'write', path: '.git/hooks/pre-commit', content: 'x' })).toThrow(/path: the \.git directory/);
    });

    it('makes POST idempotent by key only for configured origins', () => {
      const configured = new ToolRegistry({ config: { httpIdempotencyKeyOrigins: ['https://api.payments.example.com'] } });

      expect(configured.plan('a', 'http_fetch', { url: 'https://api.payments.example.com/charges', method: 'POST' }).idempotentByKey).toBe(true);
      expect(configured.plan('b', 'http_fetch', { url: 'https://other.example.com/charges', method: 'POST' }).idempotentByKey).toBe(false);
    });

    it('lists the credential an auth argument names, and never a value', () => {
      const planned = sut.plan('c', 'http_fetch', { url: 'https://api.example.com/', auth: { credential: 'api_token', scheme: 'bearer' } });

      expect(planned.credentials).toEqual(['api_token']);
      expect(planned.redactedArgs).toMatchObject({ auth: { credential: 'api_token', scheme: 'bearer' } });
    });
  });

  describe('execute', () => {
    const ctx = contextFor();

    it('refuses a deny decision', async () => {
      const planned = sut.plan('c', 'run_command', { command: 'ls' });

      await expect(sut.execute(planned, { ...allowFor(planned), decision: 'deny' }, ctx)).rejects.toThrow(ToolNotAuthorizedError);
    });

    it('refuses an approval_required decision', async () => {
      const planned = sut.plan('c', 'run_command', { command: 'ls' });

      await expect(sut.execute(planned, { ...allowFor(planned), decision: 'approval_required' }, ctx)).rejects.toMatchObject({ code: 'tool_not_authorized' });
    });

    it('refuses an allow for another call when the digest, verb or resource differ', async () => {
      const planned = sut.plan('c', 'run_command', { command: 'ls' });
      const other = sut.plan('d', 'run_command', { command: 'ls -la' });

      await expect(sut.execute(planned, { ...allowFor(planned), callDigest: other.callDigest }, ctx)).rejects.toThrow(/callDigest differ/);
      await expect(sut.execute(planned, { ...allowFor(planned), resource: 'ls *' }, ctx)).rejects.toThrow(/resource differ/);
      await expect(sut.execute(planned, { ...allowFor(planned), tool: 'http_fetch' }, ctx)).rejects.toThrow(/tool differ/);
    });

    it('refuses a planned call whose arguments were changed after planning', async () => {
      const planned = sut.plan('c', 'files', { op: 'read', path: 'a.txt' });
      const tampered = { ...planned, args: { op: 'read', path: 'secret.txt' } };

      await expect(sut.execute(tampered, allowFor(planned), ctx)).rejects.toThrow(/no longer matches its arguments/);
    });

    it('refuses control tools even with an allow', async () => {
      const planned = sut.plan('c', 'ask_owner', { question: 'Which branch?' });

      await expect(sut.execute(planned, allowFor(planned), ctx)).rejects.toThrow(/control tool/);
      await expect(sut.execute({ ...planned, control: false }, allowFor(planned), ctx)).rejects.toThrow(ToolNotAuthorizedError);
    });

    it('answers sandbox_unavailable for run_command and browser when no sandbox is configured, never running them here', async () => {
      const command = sut.plan('c', 'run_command', { command: 'npm test' });
      const page = sut.plan('d', 'browser', { action: 'read', url: 'https://example.com/' });

      await expect(sut.execute(command, allowFor(command), ctx)).resolves.toMatchObject({ ok: false, error: { code: 'sandbox_unavailable', message: 'no sandbox service is configured: run_command never runs on the host' } });
      await expect(sut.execute(page, allowFor(page), ctx)).resolves.toMatchObject({ ok: false, error: { code: 'sandbox_unavailable' } });
    });

    it('answers credential_required for email_send without an SMTP credential', async () => {
      const planned = sut.plan('c', 'email_send', { to: 'ops@example.com', subject: 'Hi', body: 'Hello' });

      await expect(sut.execute(planned, allowFor(planned), ctx)).resolves.toMatchObject({ ok: false, error: { code: 'credential_required', message: expect.stringContaining('SMTP credential') } });
    });

    it('throws ToolAbortedError when the signal is already aborted', async () => {
      const planned = sut.plan('c', 'run_command', { command: 'ls' });
      const controller = new AbortController();
      controller.abort(new Error('run cancelled'));

      await expect(sut.execute(planned, allowFor(planned), contextFor({ signal: controller.signal }))).rejects.toThrow(ToolAbortedError);
    });
  });
});
