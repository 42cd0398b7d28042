import { verifyCredentialGrant, grantSigningKeys, type AuthorizeResult } from '@packetagent/contracts';
import { admit, authorize, INTAKE_ACTOR, controlDeployment, deploy, sha, startPolicy, type AuthorizeInput, type PolicyHarness, type ToolGrants } from '../testing/policy.testkit';
import { Authorize } from './authorize';

const SEED = Buffer.alloc(32, 7).toString('base64url');

const TOOLS: ToolGrants = [
  { tool: 'http_fetch', verbs: ['GET', 'POST'], resources: ['https://ci.example.com/builds/*', 'https://api.example.com:8443'], approval: 'never', credentials: ['ci_token'] },
  { tool: 'browser', verbs: ['navigate'], resources: ['http://127.0.0.1:8080'], approval: 'never', credentials: [] },
  { tool: 'files', verbs: ['read', 'write'], resources: ['reports/**'], approval: 'never', credentials: [] },
  { tool: 'run_command', verbs: ['exec'], resources: ['git status', 'git log *'], approval: 'never', credentials: [] },
  { tool: 'slack_post', verbs: ['post'], approval: 'always', credentials: ['slack_release_channel'] },
  { tool: 'email_send', verbs: ['send'], resources: ['*@example.com'], approval: 'first_use', credentials: [] },
  { tool: 'git', verbs: ['clone'], resources: ['https://github.com/acme/*'], approval: 'always', credentials: [] },
  { tool: 'finish', verbs: [], approval: 'never', credentials: [] },
];

type Case = [label: string, call: Omit<AuthorizeInput, 'runId'> & { runId?: string }, decision: AuthorizeResult['decision'], code: string];

const get = (resource: string | null): Omit<AuthorizeInput, 'runId'> => ({ tool: 'http_fetch', verb: 'GET', resource });
const read = (resource: string): Omit<AuthorizeInput, 'runId'> => ({ tool: 'files', verb: 'read', resource });
const exec = (resource: string): Omit<AuthorizeInput, 'runId'> => ({ tool: 'run_command', verb: 'exec', resource });
const navigate = (resource: string): Omit<AuthorizeInput, 'runId'> => ({ tool: 'browser', verb: 'navigate', resource });

const TABLE: Case[] = [
  ['a granted URL', get('https://ci.example.com/builds/42'), 'allow', 'granted'],
  ['a mixed-case scheme and host', get('HTTPS://CI.Example.COM/builds/42'), 'allow', 'granted'],
  ['a trailing dot in the host', get('https://ci.example.com./builds/42'), 'allow', 'granted'],
  ['the default port written out', get('https://ci.example.com:443/builds/42'), 'allow', 'granted'],
  ['a query string (grants name origins and paths)', get('https://ci.example.com/builds/42?page=2'), 'allow', 'granted'],
  ['another port', get('https://ci.example.com:444/builds/42'), 'deny', 'resource_not_granted'],
  ['an encoded dot-dot segment', get('https://ci.example.com/builds/%2e%2e/admin'), 'deny', 'resource_not_granted'],
  ['an upper-case encoded dot-dot segment', get('https://ci.example.com/builds/%2E%2E/%2e%2E/etc/passwd'), 'deny', 'resource_not_granted'],
  ['a plain dot-dot segment', get('https://ci.example.com/builds/../admin'), 'deny', 'resource_not_granted'],
  ['userinfo hiding the real host', get('https://ci.example.com@evil.example.net/builds/1'), 'deny', 'resource_invalid'],
  ['userinfo with a password', get('https://deploy:hunter2@ci.example.com/builds/1'), 'deny', 'resource_invalid'],
  ['the granted URL inside a query of another host', get('https://evil.example.net/?u=https://ci.example.com/builds/1'), 'deny', 'resource_not_granted'],
  ['a look-alike host suffix', get('https://ci.example.com.evil.example.net/builds/1'), 'deny', 'resource_not_granted'],
  ['http instead of https', get('http://ci.example.com/builds/1'), 'deny', 'resource_not_granted'],
  ['the path prefix itself, outside the glob', get('https://ci.example.com/builds'), 'deny', 'resource_not_granted'],
  ['a non-http scheme', get('ftp://ci.example.com/builds/1'), 'deny', 'resource_invalid'],
  ['a backslash in the authority', get('https://ci.example.com\\@evil.example.net/builds/1'), 'deny', 'resource_invalid'],
  ['no resource', get(null), 'deny', 'resource_required'],
  ['a whole-origin grant with its port', get('https://api.example.com:8443/v1/anything'), 'allow', 'granted'],
  ['a whole-origin grant without its port', get('https://api.example.com/v1/anything'), 'deny', 'resource_not_granted'],
  ['a verb not granted', { tool: 'http_fetch', verb: 'DELETE', resource: 'https://ci.example.com/builds/1' }, 'deny', 'verb_not_granted'],
  ['a granted credential', { ...get('https://ci.example.com/builds/1'), credentials: ['ci_token'] }, 'allow', 'granted'],
  ['a credential not granted', { ...get('https://ci.example.com/builds/1'), credentials: ['ci_token', 'prod_db'] }, 'deny', 'credential_not_granted'],
  ['the granted loopback address', navigate('http://127.0.0.1:8080/app'), 'allow', 'granted'],
  ['an IPv4-mapped IPv6 loopback', navigate('http://[::ffff:127.0.0.1]:8080/app'), 'deny', 'resource_not_granted'],
  ['localhost for a granted IP', navigate('http://localhost:8080/app'), 'deny', 'resource_not_granted'],
  ['a file inside the granted tree', read('reports/2024/summary.md'), 'allow', 'granted'],
  ['dot segments that stay inside', read('reports/./2024/../summary.md'), 'allow', 'granted'],
  ['a path escaping the workspace', read('../etc/passwd'), 'deny', 'resource_invalid'],
  ['traversal out of the granted tree', read('reports/../../etc/passwd'), 'deny', 'resource_invalid'],
  ['traversal into a sibling tree', read('reports/../secrets/key'), 'deny', 'resource_not_granted'],
  ['encoded traversal in a path', read('reports/%2e%2e/secrets'), 'deny', 'resource_invalid'],
  ['an absolute path', read('/etc/passwd'), 'deny', 'resource_invalid'],
  ['backslash separators', read('reports\\..\\..\\etc'), 'deny', 'resource_invalid'],
  ['a path outside every grant', read('secrets/key'), 'deny', 'resource_not_granted'],
  ['a files verb not granted', { tool: 'files', verb: 'delete', resource: 'reports/a.md' }, 'deny', 'verb_not_granted'],
  ['an exact command', exec('git status'), 'allow', 'granted'],
  ['a command matching an argument glob', exec('git log --oneline -5'), 'allow', 'granted'],
  ['extra whitespace in a command', exec('  git   status '), 'allow', 'granted'],
  ['a command not granted', exec('git push origin main'), 'deny', 'resource_not_granted'],
  ['a chained command', exec('git status; rm -rf /'), 'deny', 'resource_invalid'],
  ['command substitution', exec('git log $(whoami)'), 'deny', 'resource_invalid'],
  ['a program given by path', exec('/usr/bin/git status'), 'deny', 'resource_invalid'],
  ['an unknown tool', { tool: 'shell', verb: 'exec', resource: 'ls' }, 'deny', 'unknown_tool'],
  ['a known tool not granted', { tool: 'github_api', verb: 'GET', resource: 'https://api.github.com/repos' }, 'deny', 'tool_not_granted'],
  ['a control tool', { tool: 'finish', verb: '', resource: null }, 'allow', 'granted'],
  ['a control tool given a resource', { tool: 'finish', verb: '', resource: 'x' }, 'deny', 'resource_not_expected'],
  ['an always-approve tool', { tool: 'slack_post', verb: 'post', resource: '#releases', credentials: ['slack_release_channel'] }, 'approval_required', 'approval_required'],
  ['an always-approve tool with a foreign credential', { tool: 'slack_post', verb: 'post', resource: '#releases', credentials: ['ci_token'] }, 'deny', 'credential_not_granted'],
  ['a first use', { tool: 'email_send', verb: 'send', resource: 'ops@example.com' }, 'approval_required', 'first_use'],
  ['an address outside the granted domain', { tool: 'email_send', verb: 'send', resource: 'ops@example.com.evil.net' }, 'deny', 'resource_not_granted'],
  ['an unknown run', { ...get('https://ci.example.com/builds/1'), runId: 'run-that-never-was' }, 'deny', 'unknown_run'],
  ['a run of another workspace', { ...get('https://ci.example.com/builds/1'), runId: 'r-other' }, 'deny', 'unknown_run'],
  ['a run of a paused deployment', { ...get('https://ci.example.com/builds/1'), runId: 'r-paused' }, 'deny', 'deployment_paused'],
  ['a run of a revoked deployment', { ...get('https://ci.example.com/builds/1'), runId: 'r-revoked' }, 'deny', 'deployment_revoked'],
];

describe(Authorize.name, () => {
  let h: PolicyHarness;

  beforeAll(async () => {
    h = await startPolicy({ policy: { grantSigningKey: SEED } });
    await deploy(h, 'd-main', TOOLS);
    await admit(h, 'r-main', 'd-main');
    await deploy(h, 'd-paused', TOOLS);
    await admit(h, 'r-paused', 'd-paused');
    await controlDeployment(h, 'd-paused', 'deployment.paused');
    await deploy(h, 'd-revoked', TOOLS);
    await admit(h, 'r-revoked', 'd-revoked');
    await controlDeployment(h, 'd-revoked', 'deployment.revoked');
    await deploy(h, 'd-other', TOOLS, 'ws_other');
    await admit(h, 'r-other', 'd-other', 'ws_other');
  });

  afterAll(() => h?.close());

  it.each(TABLE)('decides %s', async (_label, call, decision, code) => {
    const sut = await authorize(h, { runId: 'r-main', ...call });
    expect({ decision: sut.decision, code: sut.reason.code }).toEqual({ decision, code });
  });

  it('decides for a run the moment intake admitted it, before its consumers have applied the run or its deployment', async () => {
    const runs = Array.from({ length: 10 }, (_, index) => `r-fresh-${index}`);
    await Promise.all(
      runs.map(async (runId) => {
        const deploymentId = `d-${runId}`;
        const effectiveDigest = sha(`${deploymentId}:${JSON.stringify(TOOLS)}`);
        const pin = { deploymentId, workerId: 'w1', workerName: 'release-audit', version: 1, digest: sha(`version:${deploymentId}`), effectiveDigest };
        await h.store.transaction(async (client) => {
          await h.store.append(`deployment-${deploymentId}`, 'no_stream', [{ type: 'deployment.created', data: { ...pin, overrides: {}, maxConcurrentRuns: 5, triggers: [], limits: { budgets: {}, bounds: {}, tools: TOOLS } }, actor: INTAKE_ACTOR }], { workspaceId: h.workspaceId, client });
          const activation = { activationId: `act-${runId}`, source: 'manual', dedupeKey: runId, triggerId: null, receivedAt: new Date().toISOString(), input: null, inputRef: null, details: {} };
          await h.store.append(`run-${runId}`, 'no_stream', [{ type: 'run.admitted', data: { ...pin, runId, activation }, actor: INTAKE_ACTOR }], { workspaceId: h.workspaceId, client });
        });
      }),
    );
    const answers = await Promise.all(runs.map((runId) => authorize(h, { runId, ...get('https://ci.example.com/builds/1') })));
    expect(answers.map((answer) => answer.decision)).toEqual(runs.map(() => 'allow'));
  });

  it('still answers unknown_run for a run nobody admitted', async () => {
    const sut = await authorize(h, { runId: 'r-never-admitted', ...get('https://ci.example.com/builds/1') });
    expect(sut).toMatchObject({ decision: 'deny', reason: { code: 'unknown_run' } });
  });

  it('records every decision on the run\'s policy stream with its reason', async () => {
    const callDigest = sha('recorded-call');
    await authorize(h, { runId: 'r-main', ...exec('git push'), callDigest });
    const events = await h.store.readStream('policy-r-main');
    const recorded = events.find((event) => (event.data as { callDigest: string }).callDigest === callDigest);
    expect(recorded).toMatchObject({
      type: 'policy.decided',
      data: { runId: 'r-main', tool: 'run_command', verb: 'exec', decision: 'deny', reason: { code: 'resource_not_granted' }, deploymentId: 'd-main' },
    });
    expect(await h.store.streamVersion('run-r-main')).toBe(1);
  });

  it('issues one signed short-lived grant per credential when it allows', async () => {
    const sut = await authorize(h, { runId: 'r-main', ...get('https://ci.example.com/builds/7'), credentials: ['ci_token'] });
    expect(sut.decision).toBe('allow');
    expect(sut.credentialGrants).toHaveLength(1);
    const grant = verifyCredentialGrant(sut.credentialGrants![0]!.token, grantSigningKeys(SEED).publicKey);
    expect(grant).toMatchObject({ workspaceId: h.workspaceId, runId: 'r-main', tool: 'http_fetch', credential: 'ci_token' });
    const lifetime = Date.parse(grant.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(0);
    expect(lifetime).toBeLessThanOrEqual(60_000);
    const again = await authorize(h, { runId: 'r-main', ...get('https://ci.example.com/builds/7'), credentials: ['ci_token'] });
    expect(verifyCredentialGrant(again.credentialGrants![0]!.token, grantSigningKeys(SEED).publicKey).grantId).not.toBe(grant.grantId);
  });

  it('issues no grant when it does not allow', async () => {
    const sut = await authorize(h, { runId: 'r-main', tool: 'slack_post', verb: 'post', resource: '#ops', credentials: ['slack_release_channel'] });
    expect(sut.decision).toBe('approval_required');
    expect(sut.credentialGrants).toBeUndefined();
  });

  it('answers many concurrent calls of one run, each recorded once, none lost to a race', async () => {
    await deploy(h, 'd-busy', TOOLS);
    await admit(h, 'r-busy', 'd-busy');
    const before = await h.store.streamVersion('policy-r-busy');

    const answers = await Promise.all(Array.from({ length: 80 }, (_, i) => authorize(h, { runId: 'r-busy', ...get(`https://ci.example.com/builds/${i}`) })));

    expect(answers.map((answer) => answer.decision)).toEqual(Array(80).fill('allow'));
    expect((await h.store.streamVersion('policy-r-busy')) - before).toBe(80);
  });

  it('allows again when a paused deployment resumes', async () => {
    await deploy(h, 'd-resume', TOOLS);
    await admit(h, 'r-resume', 'd-resume');
    await controlDeployment(h, 'd-resume', 'deployment.paused');
    expect((await authorize(h, { runId: 'r-resume', ...exec('git status') })).reason.code).toBe('deployment_paused');
    await controlDeployment(h, 'd-resume', 'deployment.resumed');
    expect((await authorize(h, { runId: 'r-resume', ...exec('git status') })).decision).toBe('allow');
  });

  it('keeps no secret of a call in any event', async () => {
    await authorize(h, {
      runId: 'r-main',
      ...get('https://deploy:hunter2-password@ci.example.com/builds/1?token=tok_SECRET123&page=2'),
    });
    await authorize(h, { runId: 'r-main', ...get('https://ci.example.com/builds/1?access_token=tok_SECRET123#frag_SECRET') });
    await authorize(h, {
      runId: 'r-main',
      tool: 'git',
      verb: 'clone',
      resource: 'https://bot:hunter2-password@github.com/acme/repo?token=tok_SECRET123',
      arguments: { url: 'https://bot:hunter2-password@github.com/acme/repo?token=tok_SECRET123' },
    });
    const asked = await authorize(h, {
      runId: 'r-main',
      tool: 'slack_post',
      verb: 'post',
      resource: '#releases',
      arguments: { text: 'build https://bot:hunter2-password@ci.example.com/builds/9?token=tok_SECRET123 is red' },
    });
    expect(asked.decision).toBe('approval_required');
    const { rows } = await h.db.pool.query<{ data: unknown; metadata: unknown }>(`SELECT data, metadata FROM events`);
    expect(rows.length).toBeGreaterThan(60);
    const text = JSON.stringify(rows);
    for (const secret of ['hunter2-password', 'tok_SECRET123', 'frag_SECRET']) expect(text).not.toContain(secret);
    expect(text).toContain('"resource":"https://ci.example.com/builds/1?token=***&page=***"');
  });
});
