import { canonicalJson, sha256Hex, type JsonObject, type JsonValue } from '../json';
import { validateWorkerDefinition } from '../worker-definition/parse';
import { PackageInvalidError, PackageUnsupportedVersionError } from './errors';
import { exampleDefinitionSource, exampleProvenance, refusal } from './packetade.testkit';
import { createWorkerPackage, derivePackageRequirements, parseWorkerPackage, type WorkerPackage } from './worker-package.v1';

const EXAMPLE_REQUIRES = { providers: ['preset:default'], tools: ['http_fetch', 'slack_post'], credentials: ['ops_hook', 'slack_release_channel'] };

type Loose = Record<string, unknown>;
type Draft = Loose & { worker: Loose; provenance: Loose & { source: Loose }; requires: Loose };

function draft(): Draft {
  return createWorkerPackage(exampleDefinitionSource(), exampleProvenance()) as unknown as Draft;
}

describe(derivePackageRequirements.name, () => {
  it('lists the preset, the tools granted and every credential of the example, sorted', () => {
    expect(derivePackageRequirements(validateWorkerDefinition(exampleDefinitionSource()))).toEqual(EXAMPLE_REQUIRES);
  });

  it('names a provider model by its provider, an MCP grant by the tool the definition stores, and the credential of its server', () => {
    const sut = derivePackageRequirements(
      validateWorkerDefinition({
        apiVersion: 'packetagent/v1',
        kind: 'Worker',
        name: 'triage',
        model: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
        instructions: 'Triage new issues.',
        mcp: [{ name: 'tracker', transport: 'http', url: 'https://mcp.example.com/mcp', credential: 'tracker_token' }],
        tools: [
          { tool: 'mcp:tracker/create_issue' },
          { tool: 'mcp:tracker/search', approval: 'never' },
          { tool: 'files', verbs: ['read'], resources: ['notes/**'] },
          { tool: 'ask_owner' },
        ],
        exit: { finish: { criteria: ['every new issue has a label'] } },
      }),
    );
    expect(sut).toEqual({ providers: ['anthropic'], tools: ['ask_owner', 'files', 'mcp'], credentials: ['tracker_token'] });
  });
});

describe(createWorkerPackage.name, () => {
  it('keeps the definition as written and fills requires from it', () => {
    const source = exampleDefinitionSource();
    const sut = createWorkerPackage(source, exampleProvenance());
    expect(sut).toEqual({ apiVersion: 'packetagent/v1', kind: 'WorkerPackage', worker: source, provenance: exampleProvenance(), requires: EXAMPLE_REQUIRES });
    expect(sut.worker).not.toBe(source);
  });

  it('refuses an invalid definition with its issues under worker.', () => {
    const source = { ...exampleDefinitionSource(), name: 'Release Audit' };
    const sut = refusal(() => createWorkerPackage(source, exampleProvenance()));
    expect(sut).toBeInstanceOf(PackageInvalidError);
    expect(sut.issues).toEqual([{ path: 'worker.name', message: 'a worker name starts with a lower-case letter and has only a-z, 0-9 and "-" (2 to 63 characters)' }]);
  });

  it('refuses invalid provenance', () => {
    const provenance = { ...exampleProvenance(), builtAt: '2026-03-02' };
    expect(refusal(() => createWorkerPackage(exampleDefinitionSource(), provenance)).issues.map((issue) => issue.path)).toEqual(['provenance.builtAt']);
  });
});

describe(parseWorkerPackage.name, () => {
  it('returns the package as given, its validated definition, canonical form and digest', () => {
    const given = draft();
    const sut = parseWorkerPackage(given);
    expect(sut.package).toEqual(given);
    expect(sut.definition).toEqual(validateWorkerDefinition(given.worker));
    expect(sut.definition.bounds.maxConcurrentRuns).toBe(10);
    expect(sut.canonical).toBe(canonicalJson(given as unknown as JsonValue));
    expect(sut.digest).toBe(sha256Hex(sut.canonical));
    expect(sut.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives the same digest whatever the order of the keys', () => {
    const given = draft();
    const reordered: Loose = Object.fromEntries(Object.entries(given).reverse());
    reordered['worker'] = Object.fromEntries(Object.entries(given.worker).reverse());
    expect(parseWorkerPackage(reordered).digest).toBe(parseWorkerPackage(given).digest);
  });

  it('gives another digest when the definition changes, even to a default value', () => {
    const given = draft();
    const changed = draft();
    changed.worker['bounds'] = { ...(given.worker['bounds'] as JsonObject), maxConcurrentRuns: 10 };
    expect(parseWorkerPackage(changed).digest).not.toBe(parseWorkerPackage(given).digest);
  });

  it('refuses another packetagent/vN as unsupported, naming the version this server reads', () => {
    const given = draft();
    given['apiVersion'] = 'packetagent/v2';
    given['future'] = { field: true };
    const sut = refusal(() => parseWorkerPackage(given));
    expect(sut).toBeInstanceOf(PackageUnsupportedVersionError);
    expect(sut.code).toBe('package_unsupported_version');
    expect(sut.issues).toEqual([{ path: 'apiVersion', message: 'unsupported apiVersion "packetagent/v2" (this server reads packetagent/v1)' }]);
  });

  describe('refuses a malformed package with package_invalid, naming the path and the rule', () => {
    const cases: Array<[string, (d: Draft) => void, string, string]> = [
      ['an apiVersion of another format', (d) => (d['apiVersion'] = 'v1'), 'apiVersion', 'must be "packetagent/v1"'],
      ['another kind', (d) => (d['kind'] = 'Worker'), 'kind', 'must be "WorkerPackage"'],
      ['a missing kind', (d) => delete d['kind'], 'kind', 'required'],
      ['an unknown top-level key', (d) => (d['signature'] = 'x'), 'signature', 'unknown key (allowed: apiVersion, kind, worker, provenance, requires)'],
      ['a missing worker', (d) => delete (d as Loose)['worker'], 'worker', 'required'],
      ['a worker that is a list', (d) => ((d as Loose)['worker'] = []), 'worker', 'expected an object, got an array'],
      ['a commit that is a number', (d) => (d.provenance.source['commit'] = 3141592), 'provenance.source.commit', 'expected a string, got an integer'],
      ['a commit in capitals', (d) => (d.provenance.source['commit'] = 'ABCDEF1'), 'provenance.source.commit', 'must be a commit id: 7 to 64 lower-case hexadecimal digits'],
      ['a commit too short', (d) => (d.provenance.source['commit'] = 'abc12'), 'provenance.source.commit', 'must be a commit id: 7 to 64 lower-case hexadecimal digits'],
      ['a builtAt that is not a date', (d) => (d.provenance['builtAt'] = 'yesterday'), 'provenance.builtAt', 'must be an RFC 3339 date-time with seconds and an offset, e.g. 2026-01-31T09:30:00Z'],
      ['a builtAt without an offset', (d) => (d.provenance['builtAt'] = '2026-03-02T10:15:00'), 'provenance.builtAt', 'must be an RFC 3339 date-time with seconds and an offset, e.g. 2026-01-31T09:30:00Z'],
      ['a builtAt that is a number', (d) => (d.provenance['builtAt'] = 1772446500), 'provenance.builtAt', 'expected a string, got an integer'],
      ['a path leaving the repository', (d) => (d.provenance.source['path'] = 'workers/../../etc/passwd'), 'provenance.source.path', 'must be a relative path inside the repository: no leading "/" and no ".." segment'],
      ['an absolute path', (d) => (d.provenance.source['path'] = '/workers/a.yaml'), 'provenance.source.path', 'must be a relative path inside the repository: no leading "/" and no ".." segment'],
      ['an empty repository', (d) => (d.provenance.source['repository'] = ''), 'provenance.source.repository', 'must not be empty'],
      ['an unknown provenance key', (d) => (d.provenance.source['branch'] = 'main'), 'provenance.source.branch', 'unknown key (allowed: repository, commit, path)'],
      ['a builtBy too long', (d) => (d.provenance['builtBy'] = 'x'.repeat(201)), 'provenance.builtBy', 'must be at most 200 characters'],
      ['a missing requires list', (d) => delete d.requires['providers'], 'requires.providers', 'required'],
      ['a duplicate requirement', (d) => (d.requires['tools'] = ['http_fetch', 'http_fetch']), 'requires.tools[1]', 'duplicate of [0] "http_fetch"'],
      ['an empty requirement', (d) => (d.requires['credentials'] = ['']), 'requires.credentials[0]', 'must not be empty'],
      ['too many requirements', (d) => (d.requires['tools'] = Array.from({ length: 65 }, (_, i) => `t${i}`)), 'requires.tools', 'must have at most 64 items'],
      ['an invalid definition', (d) => (d.worker['tools'] = [{ tool: 'ftp' }]), 'worker.tools[0].tool', 'unknown tool "ftp" (known: http_fetch, github_api, browser, run_command, files, git, slack_post, email_send, mcp, finish, ask_owner, propose_criteria, update_criteria)'],
      ['a definition of another apiVersion', (d) => (d.worker['apiVersion'] = 'packetagent/v2'), 'worker.apiVersion', 'unsupported apiVersion "packetagent/v2" (supported: packetagent/v1)'],
      ['a NUL character', (d) => (d.worker['instructions'] = 'Audit\u0000 it.'), 'worker.instructions', 'string contains a NUL character'],
      ['a value JSON cannot hold', (d) => (d.provenance['builtAt'] = new Date() as unknown as string), 'provenance.builtAt', 'Date is not a plain JSON object'],
    ];
    it.each(cases)('%s', (_case, change, path, message) => {
      const given = draft();
      change(given);
      const sut = refusal(() => parseWorkerPackage(given));
      expect(sut).toBeInstanceOf(PackageInvalidError);
      expect(sut.code).toBe('package_invalid');
      expect(sut.issues).toEqual([{ path, message }]);
    });
  });

  describe('refuses requires that is not what the definition needs', () => {
    it.each<[string, (d: Draft) => void, string, string]>([
      ['a missing credential', (d) => (d.requires['credentials'] = ['slack_release_channel']), 'requires.credentials', 'missing "ops_hook", which the worker uses (each credential the worker needs, sorted)'],
      ['an extra tool', (d) => (d.requires['tools'] = ['files', 'http_fetch', 'slack_post']), 'requires.tools', 'lists "files", which the worker does not use (each tool the worker needs, sorted)'],
      ['another provider', (d) => (d.requires['providers'] = ['anthropic']), 'requires.providers', 'missing "preset:default", which the worker uses; lists "anthropic", which the worker does not use (each provider the worker needs, sorted)'],
      ['a list out of order', (d) => (d.requires['tools'] = ['slack_post', 'http_fetch']), 'requires.tools', 'must be sorted: "http_fetch", "slack_post" (each tool the worker needs, sorted)'],
    ])('%s', (_case, change, path, message) => {
      const given = draft();
      change(given);
      const sut = refusal(() => parseWorkerPackage(given));
      expect(sut).toBeInstanceOf(PackageInvalidError);
      expect(sut.issues).toEqual([{ path, message }]);
    });

    it('reports a requirement the definition gains when it changes', () => {
      const given = draft();
      (given.worker['tools'] as JsonObject[]).push({ tool: 'git', verbs: ['clone'], resources: ['https://git.example.com/*'], credentials: ['git_token'] });
      expect(refusal(() => parseWorkerPackage(given)).issues).toEqual([
        { path: 'requires.tools', message: 'missing "git", which the worker uses (each tool the worker needs, sorted)' },
        { path: 'requires.credentials', message: 'missing "git_token", which the worker uses (each credential the worker needs, sorted)' },
      ]);
    });
  });

  it('reports the issues of the package and of its definition together', () => {
    const given = draft();
    given.provenance.source['commit'] = 42;
    given.worker['kind'] = 'Job';
    delete given.worker['instructions'];
    expect(refusal(() => parseWorkerPackage(given)).issues).toEqual([
      { path: 'provenance.source.commit', message: 'expected a string, got an integer' },
      { path: 'worker.kind', message: 'must be "Worker"' },
      { path: 'worker.instructions', message: 'required' },
    ]);
  });

  it.each([
    ['null', null],
    ['a list', [1]],
    ['a string', 'package'],
  ])('refuses %s as a package', (_case, value) => {
    const sut = refusal(() => parseWorkerPackage(value));
    expect(sut).toBeInstanceOf(PackageInvalidError);
    expect(sut.issues[0]?.path).toBe('');
  });

  it('does not change the package it reads', () => {
    const given = draft();
    const before = JSON.parse(JSON.stringify(given)) as unknown;
    parseWorkerPackage(given as unknown as WorkerPackage);
    expect(given).toEqual(before);
  });
});
