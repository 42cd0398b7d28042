import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { stringify } from 'yaml';
import type { ValidationIssue } from '../errors';
import { DefinitionError, DefinitionTooLargeError } from './errors';
import { KNOWN_TOOLS } from './known-tools';
import { MAX_DEFINITION_BYTES, parseWorkerDefinition, validateWorkerDefinition, type DefinitionFormat } from './parse';
import type { WorkerDefinition } from './schema';

type Draft = Record<string, unknown> & { tools: Array<Record<string, unknown>>; triggers: Array<Record<string, unknown>> };

function draft(): Draft {
  return {
    apiVersion: 'packetagent/v1',
    kind: 'Worker',
    name: 'release-audit',
    model: { preset: 'default' },
    instructions: 'Check every release item for evidence.',
    tools: [
      { tool: 'http_fetch', verbs: ['GET'], resources: ['https://ci.example.com/*'], approval: 'never' },
      { tool: 'slack_post', credentials: ['slack_release_channel'] },
    ],
    exit: { finish: { criteria: ['every release item has evidence'] } },
    triggers: [{ cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }, { webhook: {} }],
  };
}

function refusal(source: string | Buffer, format: DefinitionFormat): DefinitionError {
  try {
    parseWorkerDefinition(source, format);
  } catch (error) {
    if (error instanceof DefinitionError) return error;
    throw error;
  }
  throw new Error('the definition was accepted');
}

function issuesOf(source: string, format: DefinitionFormat): ValidationIssue[] {
  return [...refusal(source, format).issues];
}

/** The issues of the base draft after `change`, submitted as JSON. */
function issuesAfter(change: (d: Draft) => void): ValidationIssue[] {
  const d = draft();
  change(d);
  return issuesOf(JSON.stringify(d), 'json');
}

const KNOWN = Object.keys(KNOWN_TOOLS).join(', ');
const URL_WILDCARD = 'not a URL origin or glob: a wildcard is only allowed as a leading "*." followed by at least two labels';

describe(parseWorkerDefinition.name, () => {
  describe('refuses a malformed definition, naming the path and the rule', () => {
    const cases: Array<[string, (d: Draft) => void, string, string]> = [
      ['another apiVersion', (d) => (d['apiVersion'] = 'packetagent/v2'), 'apiVersion', 'unsupported apiVersion "packetagent/v2" (supported: packetagent/v1)'],
      ['another kind', (d) => (d['kind'] = 'Job'), 'kind', 'must be "Worker"'],
      ['a name of the wrong type', (d) => (d['name'] = 42), 'name', 'expected a string, got an integer'],
      ['a name with capitals', (d) => (d['name'] = 'Release-Audit'), 'name', 'a worker name starts with a lower-case letter and has only a-z, 0-9 and "-" (2 to 63 characters)'],
      [
        'an unknown top-level key',
        (d) => (d['colour'] = 'blue'),
        'colour',
        'unknown key (allowed: apiVersion, kind, name, description, model, instructions, input, output, tools, budgets, bounds, exit, triggers, notifications, mcp)',
      ],
      ['an unknown key in a grant', (d) => (d.tools[0]!['verb'] = 'GET'), 'tools[0].verb', 'unknown key (allowed: tool, verbs, resources, approval, credentials, computers)'],
      ['computers on a tool other than run_command', (d) => (d.tools[0]!['computers'] = ['build-box']), 'tools[0].computers', 'http_fetch takes no computers: only run_command and the tools of MCP servers run on registered computers'],
      [
        'a malformed computer name',
        (d) => d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['make *'], computers: ['Build_Box'] }),
        'tools[2].computers[0]',
        'a computer name starts with a lower-case letter and has only a-z, 0-9 and "-" (at most 63 characters)',
      ],
      ['a computer named twice', (d) => d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['make *'], computers: ['build-box', 'build-box'] }), 'tools[2].computers[1]', 'duplicate computer "build-box"'],
      [
        'more than 32 computers',
        (d) => d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['make *'], computers: Array.from({ length: 33 }, (_, i) => `box-${i}`) }),
        'tools[2].computers',
        'must have at most 32 items',
      ],
      ['an unknown tool', (d) => (d.tools[1]!['tool'] = 'x'), 'tools[1].tool', `unknown tool "x" (known: ${KNOWN})`],
      ['an unknown verb for the tool', (d) => (d.tools[0]!['verbs'] = ['GET', 'FETCH']), 'tools[0].verbs[1]', 'unknown verb "FETCH" for http_fetch (known: GET, HEAD, POST, PUT, PATCH, DELETE)'],
      ['a resource tool without verbs', (d) => delete d.tools[0]!['verbs'], 'tools[0].verbs', 'required for http_fetch: list the verbs to grant (GET, HEAD, POST, PUT, PATCH, DELETE)'],
      ['a resource tool without resources', (d) => d.tools.push({ tool: 'files', verbs: ['read'] }), 'tools[2].resources', 'required for files: list the workspace path globs it may use'],
      ['verbs on a control tool', (d) => d.tools.push({ tool: 'finish', verbs: ['GET'] }), 'tools[2].verbs', 'finish takes no verbs'],
      ['a duplicate grant', (d) => d.tools.push({ tool: 'http_fetch', verbs: ['HEAD'], resources: ['https://ci.example.com'] }), 'tools[2].tool', 'duplicate grant for "http_fetch" (first at tools[0])'],
      [
        'a malformed credential name',
        (d) => (d.tools[1]!['credentials'] = ['Slack-Token']),
        'tools[1].credentials[0]',
        'a credential name starts with a lower-case letter and has only a-z, 0-9 and "_" (at most 63 characters)',
      ],
      ['a bare * URL', (d) => (d.tools[0]!['resources'] = ['*']), 'tools[0].resources[0]', 'not a URL origin or glob'],
      ['a host that is only a wildcard', (d) => (d.tools[0]!['resources'] = ['https://ci.example.com/*', 'https://*']), 'tools[0].resources[1]', URL_WILDCARD],
      ['a wildcard over a top-level domain', (d) => (d.tools[0]!['resources'] = ['https://*.com/*']), 'tools[0].resources[0]', URL_WILDCARD],
      ['*.com without a scheme', (d) => (d.tools[0]!['resources'] = ['*.com']), 'tools[0].resources[0]', 'not a URL origin or glob'],
      ['a wildcard inside the host', (d) => (d.tools[0]!['resources'] = ['https://ci.*.example.com/']), 'tools[0].resources[0]', URL_WILDCARD],
      ['userinfo in a URL', (d) => (d.tools[0]!['resources'] = ['https://bot@ci.example.com/*']), 'tools[0].resources[0]', 'not a URL origin or glob: userinfo is not allowed'],
      ['a query in a URL', (d) => (d.tools[0]!['resources'] = ['https://ci.example.com/runs?all=1']), 'tools[0].resources[0]', 'not a URL origin or glob: a query is not allowed'],
      ['a fragment in a URL', (d) => (d.tools[0]!['resources'] = ['https://ci.example.com/#top']), 'tools[0].resources[0]', 'not a URL origin or glob: a fragment is not allowed'],
      ['a scheme other than http(s)', (d) => (d.tools[0]!['resources'] = ['file:///etc/passwd']), 'tools[0].resources[0]', 'not a URL origin or glob: scheme "file" is not http or https'],
      ['a git repository over ssh', (d) => d.tools.push({ tool: 'git', verbs: ['clone'], resources: ['ssh://github.com/acme/app'] }), 'tools[2].resources[0]', 'not a URL origin or glob: scheme "ssh" is not http or https'],
      [
        'an absolute workspace path',
        (d) => d.tools.push({ tool: 'files', verbs: ['read'], resources: ['/etc/passwd'] }),
        'tools[2].resources[0]',
        'not a relative path glob inside the run workspace: absolute paths are not allowed',
      ],
      [
        'a path escaping the workspace with ..',
        (d) => d.tools.push({ tool: 'files', verbs: ['read'], resources: ['reports/../../secrets/*'] }),
        'tools[2].resources[0]',
        'not a relative path glob inside the run workspace: ".." escapes the run workspace',
      ],
      [
        'percent-encoded dot segments in a path',
        (d) => d.tools.push({ tool: 'files', verbs: ['read'], resources: ['%2e%2e/secrets'] }),
        'tools[2].resources[0]',
        'not a relative path glob inside the run workspace: a percent-encoded ".", "/", "\\" or NUL is not allowed',
      ],
      ['a NUL character in a path', (d) => d.tools.push({ tool: 'files', verbs: ['read'], resources: ['a\u0000b'] }), 'tools[2].resources[0]', 'string contains a NUL character'],
      ['a command pattern of *', (d) => d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['*'] }), 'tools[2].resources[0]', 'not a command pattern: "*" is too broad: name the program'],
      [
        'shell metacharacters in a command pattern',
        (d) => d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['npm test; curl evil.example'] }),
        'tools[2].resources[0]',
        'not a command pattern: shell metacharacters ; | & $ < > ` are not allowed',
      ],
      [
        'a program given by path',
        (d) => d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['/bin/sh -c *'] }),
        'tools[2].resources[0]',
        'not a command pattern: the program must be a plain name, not a path',
      ],
      [
        'a wildcard program',
        (d) => d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['np* test'] }),
        'tools[2].resources[0]',
        'not a command pattern: the program must be a plain name without wildcards',
      ],
      ['a Slack channel without #', (d) => (d.tools[1]!['resources'] = ['releases']), 'tools[1].resources[0]', 'not a Slack channel: expected "#name"'],
      [
        'a wildcard email domain',
        (d) => d.tools.push({ tool: 'email_send', resources: ['*@*.example.com'] }),
        'tools[2].resources[0]',
        'not an email address or "*@domain": the domain must be a host name with at least two labels',
      ],
      ['a negative budget', (d) => (d['budgets'] = { perRunUsd: -1 }), 'budgets.perRunUsd', 'must be greater than 0'],
      ['a zero budget', (d) => (d['budgets'] = { perDeploymentDailyUsd: 0 }), 'budgets.perDeploymentDailyUsd', 'must be greater than 0'],
      ['a budget over the ceiling', (d) => (d['budgets'] = { perWorkspaceDailyUsd: 200000 }), 'budgets.perWorkspaceDailyUsd', 'must be at most 100000'],
      ['a zero action limit', (d) => (d['budgets'] = { actions: { slack_post: { perRun: 0 } } }), 'budgets.actions.slack_post.perRun', 'must be greater than 0'],
      ['an action budget for an unknown tool', (d) => (d['budgets'] = { actions: { fax: { perDay: 1 } } }), 'budgets.actions.fax', `unknown tool "fax" (known: ${KNOWN})`],
      ['a bound below its minimum', (d) => (d['bounds'] = { maxIterations: 0 }), 'bounds.maxIterations', 'must be at least 1'],
      ['a bound above its maximum', (d) => (d['bounds'] = { maxWallSeconds: 90000 }), 'bounds.maxWallSeconds', 'must be at most 86400'],
      ['a fractional bound', (d) => (d['bounds'] = { maxToolCalls: 1.5 }), 'bounds.maxToolCalls', 'expected an integer, got a number'],
      ['oversize instructions', (d) => (d['instructions'] = 'x'.repeat(32769)), 'instructions', 'instructions exceed 32768 characters'],
      ['empty instructions', (d) => (d['instructions'] = ''), 'instructions', 'instructions must not be empty'],
      ['an overlong description', (d) => (d['description'] = 'x'.repeat(2001)), 'description', 'description exceeds 2000 characters'],
      ['both a preset and a provider', (d) => (d['model'] = { preset: 'fast', provider: 'openai', model: 'gpt' }), 'model', 'has "preset" and "provider"; needs exactly one of "preset" or "provider" (with "model")'],
      ['an unknown provider', (d) => (d['model'] = { provider: 'acme', model: 'm1' }), 'model.provider', 'must be one of: anthropic, openai, gemini, openrouter, minimax, local, scripted'],
      ['an input schema without a type', (d) => (d['input'] = { schema: { properties: {} } }), 'input.schema', 'must be a JSON Schema object with a "type" (a string or a list of strings)'],
      ['a missing exit', (d) => delete d['exit'], 'exit', 'required (exactly one of "finish" or "outputSchema")'],
      [
        'an exit with both conditions',
        (d) => (d['exit'] = { finish: { criteria: ['done'] }, outputSchema: { type: 'object' } }),
        'exit',
        'has "finish" and "outputSchema"; needs exactly one of "finish" or "outputSchema"',
      ],
      ['an exit without criteria', (d) => (d['exit'] = { finish: { criteria: [] } }), 'exit.finish.criteria', 'must not be empty'],
      ['a cron with a field out of range', (d) => (d.triggers[0]!['cron'] = '61 9 * * *'), 'triggers[0].cron', 'invalid cron expression: Invalid value for minute: 61'],
      [
        'a cron with four fields',
        (d) => (d.triggers[0]!['cron'] = '0 9 * *'),
        'triggers[0].cron',
        'a cron expression has 5 fields (minute hour day month weekday) or 6 (with seconds first); got 4',
      ],
      ['a cron that never fires', (d) => (d.triggers[0]!['cron'] = '0 0 30 2 *'), 'triggers[0].cron', 'the cron expression never fires'],
      ['an unknown time zone', (d) => (d.triggers[0]!['timezone'] = 'Mars/Olympus_Mons'), 'triggers[0].timezone', 'unknown time zone "Mars/Olympus_Mons"'],
      ['a UTC offset as time zone', (d) => (d.triggers[0]!['timezone'] = '+01:00'), 'triggers[0].timezone', '"+01:00" is not an IANA time zone name (e.g. Europe/Paris, UTC)'],
      ['an alert trigger with neither names nor labels', (d) => d.triggers.push({ alert: { on: ['firing'] } }), 'triggers[2].alert', 'an alert trigger needs names or labels'],
      [
        'a queue subject with a wildcard',
        (d) => d.triggers.push({ queue: { subject: 'orders.*' } }),
        'triggers[2].queue.subject',
        'a subject is dot-separated tokens of a-z, 0-9, "_" and "-", without wildcards',
      ],
      [
        'a trigger of no kind',
        (d) => d.triggers.push({ name: 'nightly' }),
        'triggers[2]',
        'needs exactly one of "cron", "webhook", "queue", "alert" or "manual"',
      ],
      ['a trigger named like another trigger\'s key', (d) => d.triggers.push({ manual: {}, name: 'webhook-1' }), 'triggers[2].name', 'duplicate trigger key "webhook-1" (also triggers[1])'],
      [
        'a webhook notification without a credential',
        (d) => (d['notifications'] = [{ on: ['failed'], channel: 'webhook' }]),
        'notifications[0].credential',
        'required for a webhook route: the credential holds its signing secret',
      ],
      [
        'two notification routes of one name',
        (d) =>
          (d['notifications'] = [
            { name: 'ops', on: ['failed'], channel: 'webhook', credential: 'ops_hook' },
            { name: 'ops', on: ['attention'], channel: 'email', to: 'ops@example.com' },
          ]),
        'notifications[1].name',
        'duplicate route name "ops" (also notifications[0])',
      ],
      [
        'a PacketPhone route without its recipient',
        (d) => (d['notifications'] = [{ on: ['attention'], channel: 'packetphone', credential: 'phone' }]),
        'notifications[0].to',
        'a packetphone route needs "to": the recipient id (letters, digits and . _ : @ -)',
      ],
      [
        'a route role that is no workspace role',
        (d) => (d['notifications'] = [{ on: ['attention'], channel: 'email', to: 'ops@example.com', role: 'owner' }]),
        'notifications[0].role',
        'must be one of: viewer, member, admin',
      ],
      ['a notification for an unknown event', (d) => (d['notifications'] = [{ on: ['paused'], channel: 'slack', credential: 'slack_bot' }]), 'notifications[0].on[0]', 'must be one of: attention, reminder, escalation, progress, succeeded, failed, abandoned, any_terminal, budget_warning'],
      ['a prototype key', (d) => (d['input'] = JSON.parse('{"schema": {"type": "object", "__proto__": {"polluted": true}}}')), 'input.schema.__proto__', 'the key "__proto__" is not allowed'],
      ['a constructor key', (d) => (d['input'] = { schema: { type: 'object', properties: { constructor: { type: 'string' } } } }), 'input.schema.properties.constructor', 'the key "constructor" is not allowed'],
    ];

    it.each(cases)('refuses %s', (_name, change, path, message) => {
      expect(issuesAfter(change)).toContainEqual({ path, message });
    });

    it('reports only the offending issue for each case', () => {
      const issues = issuesAfter((d) => (d.tools[0]!['verbs'] = ['GET', 'FETCH']));
      expect(issues).toEqual([{ path: 'tools[0].verbs[1]', message: 'unknown verb "FETCH" for http_fetch (known: GET, HEAD, POST, PUT, PATCH, DELETE)' }]);
    });

    it('reports every issue of a document at once', () => {
      const issues = issuesAfter((d) => {
        d['kind'] = 'Job';
        d['budgets'] = { perRunUsd: 0 };
      });
      expect(issues.map((issue) => issue.path)).toEqual(['kind', 'budgets.perRunUsd']);
    });

    it('refuses a document over 256 KiB before parsing it', () => {
      const source = `${stringify(draft())}# ${'x'.repeat(MAX_DEFINITION_BYTES)}\n`;
      expect(() => parseWorkerDefinition(source, 'yaml')).toThrow(DefinitionTooLargeError);
      expect(() => parseWorkerDefinition(Buffer.from(source), 'yaml')).toThrow(
        expect.objectContaining({ code: 'definition_too_large', issues: [{ path: '', message: `the definition is ${Buffer.byteLength(source)} bytes; the limit is 262144 bytes (256 KiB)` }] }),
      );
    });

    it('refuses a YAML billion-laughs document', () => {
      const levels = 'abcdefghi'.split('');
      const source = levels
        .map((name, level) => (level === 0 ? `${name}: &${name} [lol, lol, lol, lol, lol, lol, lol, lol, lol]` : `${name}: &${name} [${Array(9).fill(`*${levels[level - 1]}`).join(', ')}]`))
        .join('\n');
      expect(issuesOf(source, 'yaml')).toEqual([{ path: '(yaml) 2:8', message: 'aliases expand beyond the limit of 50: refused as a resource exhaustion attack' }]);
    });

    it('refuses a YAML custom tag instead of resolving it', () => {
      const source = stringify(draft()).replace('instructions: Check', 'instructions: !!js/function Check');
      const line = source.split('\n').findIndex((text) => text.startsWith('instructions:')) + 1;
      expect(issuesOf(source, 'yaml')).toEqual([{ path: `(yaml) ${line}:15`, message: 'unknown tag !!js/function: tags outside the YAML core schema are not allowed' }]);
      expect(issuesOf('a: !local x\n', 'yaml')).toEqual([{ path: '(yaml) 1:4', message: 'unknown tag !local: tags outside the YAML core schema are not allowed' }]);
    });

    it('refuses duplicate keys in YAML and in JSON', () => {
      expect(issuesOf('name: a\nname: b\n', 'yaml')).toEqual([{ path: '(yaml) 2:1', message: 'duplicate key: mapping keys must be unique' }]);
      expect(issuesOf('{"name": "a",\n "tools": [{"tool": "finish", "tool": "ask_owner"}]}', 'json')).toEqual([
        { path: '(json) 2:31', message: 'duplicate key "tool": object keys must be unique' },
      ]);
      expect(issuesOf('{"a": {"b": 1}, "\\u0061": 2}', 'json')).toEqual([{ path: '(json) 1:17', message: 'duplicate key "a": object keys must be unique' }]);
    });

    it('ends a syntax error at its own sentence: the path says where, with no excerpt', () => {
      const [issue] = issuesOf('name: "unclosed\nkind: Worker\n', 'yaml');
      expect(issue!.path).toMatch(/^\(yaml\) \d+:\d+$/);
      expect(issue!.message).not.toMatch(/\n|at line \d+/);
      expect(issue!.message).toMatch(/quote/i);
    });

    it('refuses a YAML stream of two documents', () => {
      expect(issuesOf(`${stringify(draft())}---\nname: other\n`, 'yaml')).toContainEqual({
        path: `(yaml) ${stringify(draft()).split('\n').length}:1`,
        message: 'only one YAML document is allowed',
      });
    });

    it('refuses a YAML mapping key that is a collection', () => {
      expect(issuesOf('? [a, b]\n: c\n', 'yaml')).toEqual([{ path: '(yaml) 1:3', message: 'a mapping key must be a plain scalar' }]);
    });

    it('refuses a __proto__ key written in YAML', () => {
      const source = `${stringify(draft())}__proto__: { polluted: true }\n`;
      expect(issuesOf(source, 'yaml')).toEqual([{ path: '__proto__', message: 'the key "__proto__" is not allowed' }]);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    });

    it('refuses YAML values that are not JSON', () => {
      expect(issuesOf(stringify(draft()).replace('name: release-audit', 'name: .inf'), 'yaml')).toEqual([{ path: 'name', message: 'number is not finite' }]);
    });

    it('refuses documents nested too deeply, without exhausting the stack', () => {
      const depth = 100_000;
      expect(issuesOf(`${'['.repeat(depth)}${']'.repeat(depth)}`, 'json')).toEqual([{ path: expect.stringMatching(/^(\[0\]){65}$/), message: 'nested deeper than 64 levels' }]);
      expect(issuesOf(`a: ${'['.repeat(depth)}${']'.repeat(depth)}`, 'yaml')).toEqual([{ path: expect.stringMatching(/^\(yaml\) 1:\d+$/), message: 'the document is nested too deeply' }]);
    });

    it('refuses text that is not JSON, without quoting it', () => {
      expect(issuesOf('{"name": "a",\n "token": "s3cr3t",}', 'json')).toEqual([{ path: '(json) 2:20', message: 'not valid JSON' }]);
      expect(refusal('{"name": s3cr3t}', 'json').message).toBe('invalid worker definition: (json): not valid JSON');
    });

    it('refuses bytes that are not UTF-8, and an empty document', () => {
      expect(refusal(Buffer.from([0x6e, 0x61, 0xff, 0x3a]), 'yaml').issues).toEqual([{ path: '', message: 'the definition is not valid UTF-8' }]);
      expect(issuesOf('', 'yaml')).toEqual([{ path: '(yaml)', message: 'the document is empty' }]);
      expect(issuesOf('[]', 'json')).toEqual([{ path: '', message: 'expected an object, got an array' }]);
    });

    it('carries the invalid_definition code and a message listing the issues', () => {
      const error = refusal(JSON.stringify({ ...draft(), kind: 'Job' }), 'json');
      expect(error.code).toBe('invalid_definition');
      expect(error.message).toBe('invalid worker definition: kind: must be "Worker"');
    });
  });

  describe('accepts a valid definition', () => {
    it('parses the release-audit example with every default applied', () => {
      const source = readFileSync(resolve(__dirname, '../../../../../examples/release-audit.worker.yaml'));
      const sut = parseWorkerDefinition(source, 'yaml');
      expect(sut).toEqual<WorkerDefinition>({
        apiVersion: 'packetagent/v1',
        kind: 'Worker',
        name: 'release-audit',
        description: 'Verifies release evidence and blocks when something is missing.',
        model: { preset: 'default' },
        instructions: expect.stringContaining('You audit a software release before it ships.'),
        input: { schema: { type: 'object', required: ['release'], properties: { release: { type: 'string', description: 'Release identifier, e.g. 2026.11.3' } } } },
        tools: [
          { tool: 'http_fetch', verbs: ['GET'], resources: ['https://ci.example.com/*'], approval: 'never', credentials: [] },
          { tool: 'slack_post', verbs: ['post'], resources: ['#releases'], approval: 'always', credentials: ['slack_release_channel'] },
        ],
        budgets: { perRunUsd: 0.5, perDeploymentDailyUsd: 5, actions: { slack_post: { perRun: 1, perDay: 10 } } },
        bounds: { maxWallSeconds: 600, maxIterations: 20, maxToolCalls: 40, maxConcurrentRuns: 10 },
        exit: { finish: { criteria: ['every release item has evidence, or the missing items were posted to the release channel'] } },
        triggers: [
          { name: 'weekday-morning', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', missed: 'skip' },
          { webhook: {} },
        ],
        notifications: [{ on: ['attention', 'succeeded', 'failed'], channel: 'webhook', credential: 'ops_hook' }],
      });
    });

    it('applies the defaults of a minimal definition', () => {
      const sut = parseWorkerDefinition(
        JSON.stringify({
          apiVersion: 'packetagent/v1',
          kind: 'Worker',
          name: 'minimal',
          model: { provider: 'scripted', model: 'demo' },
          instructions: 'Say hello.',
          tools: [{ tool: 'finish' }, { tool: 'email_send' }],
          exit: { outputSchema: { type: 'object' } },
          triggers: [{ cron: '*/5 * * * * *' }, { alert: { labels: { severity: 'page' } } }, { manual: {} }],
        }),
        'json',
      );
      expect(sut.tools).toEqual([
        { tool: 'finish', verbs: [], approval: 'always', credentials: [] },
        { tool: 'email_send', verbs: ['send'], approval: 'always', credentials: [] },
      ]);
      expect(sut.bounds).toEqual({ maxWallSeconds: 600, maxIterations: 20, maxToolCalls: 40, maxConcurrentRuns: 10 });
      expect(sut.budgets).toEqual({});
      expect(sut.triggers).toEqual([{ cron: '*/5 * * * * *', timezone: 'UTC', missed: 'skip' }, { alert: { labels: { severity: 'page' }, on: ['firing'] } }, { manual: {} }]);
      expect(sut.notifications).toEqual([]);
    });

    it('normalises resources as it parses', () => {
      const d = draft();
      d.tools[0]!['resources'] = ['HTTPS://CI.Example.COM.:443/a/./b/%7Euser/../*'];
      d.tools.push({ tool: 'files', verbs: ['read'], resources: ['./reports//2026/../*.md'] });
      d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['  npm   test  '] });
      const sut = parseWorkerDefinition(JSON.stringify(d), 'json');
      expect(sut.tools.map((grant) => grant.resources)).toEqual([['https://ci.example.com/a/b/*'], undefined, ['reports/*.md'], ['npm test']]);
    });

    it('keeps the computers of a run_command grant as written, and leaves an empty list out', () => {
      const d = draft();
      d.tools.push({ tool: 'run_command', verbs: ['exec'], resources: ['make *'], computers: ['build-box', 'arm-runner'] });
      const sut = parseWorkerDefinition(JSON.stringify(d), 'json');
      expect(sut.tools[2]).toEqual({ tool: 'run_command', verbs: ['exec'], resources: ['make *'], approval: 'always', credentials: [], computers: ['build-box', 'arm-runner'] });
      expect(validateWorkerDefinition(JSON.parse(JSON.stringify(sut)))).toEqual(sut);

      d.tools[2]!['computers'] = [];
      expect(parseWorkerDefinition(JSON.stringify(d), 'json').tools[2]).not.toHaveProperty('computers');
    });

    it('accepts its own parsed output unchanged', () => {
      const source = readFileSync(resolve(__dirname, '../../../../../examples/release-audit.worker.yaml'), 'utf8');
      const sut = parseWorkerDefinition(source, 'yaml');
      expect(validateWorkerDefinition(JSON.parse(JSON.stringify(sut)))).toEqual(sut);
    });
  });
});

describe(validateWorkerDefinition.name, () => {
  it('accepts its own output again when the definition grants control tools, which take no verbs', () => {
    const d = draft();
    d.tools.push({ tool: 'ask_owner' }, { tool: 'propose_criteria', approval: 'never' });
    const parsed = parseWorkerDefinition(JSON.stringify(d), 'json');
    expect(parsed.tools.find((grant) => grant.tool === 'ask_owner')).toMatchObject({ verbs: [], approval: 'always' });
    expect(validateWorkerDefinition(JSON.parse(JSON.stringify(parsed)))).toEqual(parsed);
  });

  it('still refuses an empty verb list for a tool that takes verbs', () => {
    expect(issuesAfter((d) => (d.tools[0]!['verbs'] = []))).toEqual([{ path: 'tools[0].verbs', message: 'must not be empty' }]);
  });
});
