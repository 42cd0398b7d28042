import type { Subscription } from '@nats-io/transport-node';
import {
  ComputerCommands,
  CONSERVATIVE_COMPUTER_POLICY,
  grantSigningKeys,
  PolicyCommands,
  policyKeysStream,
  verifyCredentialGrant,
  type AuthorizeResult,
  type ComputerView,
} from '@packetagent/contracts';
import { admit, authorize, deploy, OPERATOR, sha, startPolicy, type PolicyHarness, type ToolGrants } from '../testing/policy.testkit';
import { Authorize } from '../authorize/authorize';
import { GrantComputerKey } from './usecases/grant-computer-key';

const SEED = Buffer.alloc(32, 9).toString('base64url');
const verifyKey = grantSigningKeys(SEED).publicKey;

type Policy = ComputerView['policy'];
const OPEN: Policy = { shell: 'allow', write: 'allow', network: 'allow', secrets: 'deny', approval: 'explicit' };

function view(workspaceId: string, name: string, policy: Policy, kind: ComputerView['kind'] = 'ssh'): ComputerView {
  return {
    workspaceId,
    name,
    kind,
    description: '',
    ssh: kind === 'ssh' ? { host: '10.0.0.5', port: 22, user: 'ci', hostKeys: [], keyCredential: `${name.replaceAll('-', '_')}_key` } : null,
    roots: kind === 'ssh' ? ['/srv/build'] : [],
    policy,
    capabilities: null,
    version: 1,
    createdBy: OPERATOR,
    createdAt: '2026-11-30T09:00:00.000Z',
    updatedAt: '2026-11-30T09:00:00.000Z',
    status: { state: 'online', observedAt: null, ageMs: null, staleAfterMs: 60_000, detail: 'probed', hostKey: { state: kind === 'ssh' ? 'pinned' : 'not_applicable', presented: null, at: null } },
  };
}

type Answer = { record: unknown } | { error: string } | 'silent';

/**
 * A test double of the sandbox service, which owns the registry of computers: a plain NATS
 * responder on `sandbox.computers.get` answering each name with what the spec set for it (a
 * record, an error code, or nothing at all), in the reply shape the sandbox's command bus uses.
 */
class ComputerRegistryDouble {
  readonly answers = new Map<string, Answer>();
  readonly asked: string[] = [];
  private subscription: Subscription | null = null;

  constructor(private readonly h: PolicyHarness) {}

  async start(): Promise<void> {
    this.subscription = this.h.testBus.nc.subscribe(`${this.h.topology.commandSubjectRoot}.${ComputerCommands.get.name}`, {
      callback: (_error, message) => {
        const { name } = message.json<{ workspaceId: string; name: string }>();
        this.asked.push(name);
        const answer = this.answers.get(name) ?? { error: 'computer_not_found' };
        if (answer === 'silent') return;
        const reply = 'record' in answer ? { ok: true, result: answer.record } : { ok: false, error: { code: answer.error, message: `computer ${name}: ${answer.error}`, retryable: false } };
        message.respond(JSON.stringify(reply));
      },
    });
    await this.h.testBus.nc.flush();
  }

  register(name: string, policy: Policy, kind: ComputerView['kind'] = 'ssh'): void {
    this.answers.set(name, { record: view(this.h.workspaceId, name, policy, kind) });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }
}

const COMPUTERS = ['open-box', 'secret-box', 'shut-box', 'asking-box', 'workspace-box', 'trusting-box', 'local-box', 'quiet-box', 'broken-box', 'missing-box'];

const TOOLS: ToolGrants = [
  { tool: 'run_command', verbs: ['exec'], resources: ['git status', 'make *'], approval: 'never', credentials: ['npm_token'], computers: COMPUTERS },
  { tool: 'http_fetch', verbs: ['GET'], resources: ['https://ci.example.com/*'], approval: 'never', credentials: [] },
];
const ALWAYS: ToolGrants = [{ tool: 'run_command', verbs: ['exec'], resources: ['make *'], approval: 'always', credentials: [], computers: ['open-box'] }];

/** A run_command call as the supervisor plans it: the computer is part of its arguments, so of its digest. */
const exec = (runId: string, command: string, computer?: string, credentials: string[] = []) => ({
  runId,
  tool: 'run_command',
  verb: 'exec',
  resource: command,
  credentials,
  arguments: { command, ...(computer ? { computer } : {}) },
  ...(computer ? { computer } : {}),
});

describe(`${Authorize.name} on registered computers`, () => {
  let h: PolicyHarness;
  let registry: ComputerRegistryDouble;
  const approve = (attentionId: string, scope: 'once' | 'run') => h.bus.request(PolicyCommands.approveAttention, { workspaceId: h.workspaceId, attentionId, scope, actor: OPERATOR });
  const decisionOf = (answer: AuthorizeResult) => ({ decision: answer.decision, code: answer.reason.code });

  beforeAll(async () => {
    h = await startPolicy({ policy: { grantSigningKey: SEED, computerRequestTimeoutMs: 300 } });
    registry = new ComputerRegistryDouble(h);
    await registry.start();
    registry.register('open-box', OPEN);
    registry.register('secret-box', { ...OPEN, secrets: 'allow' });
    registry.register('shut-box', { ...OPEN, shell: 'deny', approval: 'trust-computer' });
    registry.register('asking-box', { ...CONSERVATIVE_COMPUTER_POLICY });
    registry.register('workspace-box', { ...OPEN, write: 'ask', approval: 'trust-workspace' });
    registry.register('trusting-box', { ...OPEN, network: 'ask', approval: 'trust-computer' });
    registry.register('local-box', OPEN, 'local');
    registry.answers.set('quiet-box', 'silent');
    registry.answers.set('broken-box', { record: { name: 'broken-box', kind: 'ssh' } });
    await deploy(h, 'd-main', TOOLS);
    await deploy(h, 'd-always', ALWAYS);
  });

  afterAll(async () => {
    registry?.stop();
    await h?.close();
  });

  let runs = 0;
  const newRun = async (deploymentId = 'd-main') => {
    const runId = `r-computers-${++runs}`;
    await admit(h, runId, deploymentId);
    return runId;
  };

  it('allows a call on a granted computer whose policy allows commands, with a single-use grant for its key', async () => {
    const runId = await newRun();
    const sut = await authorize(h, exec(runId, 'make test', 'open-box'));
    expect(decisionOf(sut)).toEqual({ decision: 'allow', code: 'granted' });
    expect(sut.reason.text).toBe('run_command is granted without approval on computer "open-box"');
    const grant = verifyCredentialGrant(sut.computerGrant!, verifyKey);
    expect(grant).toMatchObject({ workspaceId: h.workspaceId, runId, tool: 'computer:open-box', credential: 'open_box_key' });
    expect(Date.parse(grant.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    const again = await authorize(h, exec(runId, 'make test', 'open-box'));
    expect(verifyCredentialGrant(again.computerGrant!, verifyKey).grantId).not.toBe(grant.grantId);
  });

  it('always allows the local sandbox to a run_command grant, without asking the registry or granting a key', async () => {
    const runId = await newRun();
    const asked = registry.asked.length;
    const sut = await authorize(h, exec(runId, 'make test'));
    expect(decisionOf(sut)).toEqual({ decision: 'allow', code: 'granted' });
    expect(sut.computerGrant).toBeUndefined();
    expect(registry.asked.length).toBe(asked);
  });

  it('denies computer_not_granted for a computer the grant does not name, and for any tool but run_command', async () => {
    const runId = await newRun();
    const other = await authorize(h, exec(runId, 'make test', 'other-box'));
    expect(other).toMatchObject({ decision: 'deny', reason: { code: 'computer_not_granted', text: 'run_command is not granted the computer "other-box"' } });
    expect(other.computerGrant).toBeUndefined();
    const fetched = await authorize(h, { runId, tool: 'http_fetch', verb: 'GET', resource: 'https://ci.example.com/x', computer: 'open-box' });
    expect(fetched).toMatchObject({ decision: 'deny', reason: { code: 'computer_not_granted', text: 'http_fetch calls do not run on computers' } });
  });

  it('checks the grant before the computer: a command the grant does not cover is denied as such', async () => {
    const runId = await newRun();
    expect(decisionOf(await authorize(h, exec(runId, 'rm -rf build', 'open-box')))).toEqual({ decision: 'deny', code: 'resource_not_granted' });
  });

  it.each([
    ['the sandbox stays silent', 'quiet-box', 'the sandbox service did not answer for computer "quiet-box"'],
    ['the record cannot be read', 'broken-box', 'the sandbox answered a record of computer "broken-box" that cannot be read'],
    ['no such computer is registered', 'missing-box', 'no computer "missing-box" is registered in this workspace'],
  ])('denies computer_unavailable when %s', async (_label, computer, text) => {
    const runId = await newRun();
    const sut = await authorize(h, exec(runId, 'make test', computer));
    expect(sut).toMatchObject({ decision: 'deny', reason: { code: 'computer_unavailable', text } });
    expect(sut.computerGrant).toBeUndefined();
  });

  it('denies computer_policy_denied when the computer denies commands, even under trust-computer', async () => {
    const runId = await newRun();
    expect(await authorize(h, exec(runId, 'make test', 'shut-box'))).toMatchObject({
      decision: 'deny',
      reason: { code: 'computer_policy_denied', text: 'computer "shut-box" lets no command run (its policy says shell: deny)' },
    });
  });

  it('denies computer_secrets_denied for credentials on a computer that takes no secrets, and grants them where it does', async () => {
    const runId = await newRun();
    expect(decisionOf(await authorize(h, exec(runId, 'make publish', 'open-box', ['npm_token'])))).toEqual({ decision: 'deny', code: 'computer_secrets_denied' });
    const allowed = await authorize(h, exec(runId, 'make publish', 'secret-box', ['npm_token']));
    expect(decisionOf(allowed)).toEqual({ decision: 'allow', code: 'granted' });
    expect(allowed.credentialGrants?.map((grant) => verifyCredentialGrant(grant.token, verifyKey))).toEqual([expect.objectContaining({ tool: 'run_command', credential: 'npm_token', runId })]);
    expect(verifyCredentialGrant(allowed.computerGrant!, verifyKey)).toMatchObject({ tool: 'computer:secret-box', credential: 'secret_box_key' });
  });

  it('asks a person for a call on a computer whose policy asks, though the grant says never; under explicit every call is asked', async () => {
    const runId = await newRun();
    const call = exec(runId, 'make deploy', 'asking-box');
    const asked = await authorize(h, call);
    expect(asked).toMatchObject({
      decision: 'approval_required',
      reason: { code: 'approval_required', text: 'commands on computer "asking-box" need a person\'s approval (its approval mode is explicit: every call is asked)' },
    });
    expect(asked.computerGrant).toBeUndefined();
    await approve(asked.approvalId!, 'run');

    const approved = await authorize(h, call);
    expect(approved).toMatchObject({ decision: 'allow', reason: { code: 'approved_once' }, approvalId: asked.approvalId });
    expect(verifyCredentialGrant(approved.computerGrant!, verifyKey)).toMatchObject({ tool: 'computer:asking-box' });

    // An identical call later in the run is asked again: approval for the run does not cover it.
    const next = await authorize(h, call);
    expect(decisionOf(next)).toEqual({ decision: 'approval_required', code: 'approval_required' });
    expect(next.approvalId).not.toBe(asked.approvalId);
  });

  it('lets an approval for the run cover identical calls under trust-workspace, on that computer only', async () => {
    const runId = await newRun();
    const asked = await authorize(h, exec(runId, 'make test', 'workspace-box'));
    expect(asked).toMatchObject({ decision: 'approval_required', reason: { text: expect.stringContaining('an approval for the run covers identical calls') } });
    await approve(asked.approvalId!, 'run');

    expect(decisionOf(await authorize(h, exec(runId, 'make test', 'workspace-box')))).toEqual({ decision: 'allow', code: 'approved_for_run' });
    const covered = await authorize(h, { ...exec(runId, 'make test', 'workspace-box'), callDigest: sha(`${runId}:a later identical call`) });
    expect(decisionOf(covered)).toEqual({ decision: 'allow', code: 'approved_for_run' });
    expect(verifyCredentialGrant(covered.computerGrant!, verifyKey)).toMatchObject({ tool: 'computer:workspace-box', runId });
    expect(decisionOf(await authorize(h, exec(runId, 'make build', 'workspace-box')))).toEqual({ decision: 'approval_required', code: 'approval_required' });
    expect(decisionOf(await authorize(h, exec(runId, 'make test', 'asking-box')))).toEqual({ decision: 'approval_required', code: 'approval_required' });
  });

  it('lets an approval once cover the one call under trust-workspace', async () => {
    const runId = await newRun();
    const asked = await authorize(h, exec(runId, 'make test', 'workspace-box'));
    await approve(asked.approvalId!, 'once');
    expect(decisionOf(await authorize(h, exec(runId, 'make test', 'workspace-box')))).toEqual({ decision: 'allow', code: 'approved_once' });
    expect(decisionOf(await authorize(h, exec(runId, 'make test', 'workspace-box')))).toEqual({ decision: 'approval_required', code: 'approval_required' });
  });

  it('allows without asking under trust-computer, where the computer\'s ask reads as allow', async () => {
    const runId = await newRun();
    expect(decisionOf(await authorize(h, exec(runId, 'make test', 'trusting-box')))).toEqual({ decision: 'allow', code: 'granted' });
  });

  it('keeps the grant\'s approval when it is the stricter: a grant that always asks still asks on a computer that allows', async () => {
    const runId = await newRun('d-always');
    const asked = await authorize(h, exec(runId, 'make test', 'open-box'));
    expect(asked).toMatchObject({ decision: 'approval_required', reason: { code: 'approval_required', text: 'run_command calls need approval' } });
    await approve(asked.approvalId!, 'run');
    expect(decisionOf(await authorize(h, exec(runId, 'make test', 'open-box')))).toEqual({ decision: 'allow', code: 'approved_for_run' });
    // Approved on the computer, the same command in the local sandbox is asked on its own.
    expect(decisionOf(await authorize(h, exec(runId, 'make test')))).toEqual({ decision: 'approval_required', code: 'approval_required' });
  });

  it('grants no key for a local computer', async () => {
    const runId = await newRun();
    const sut = await authorize(h, exec(runId, 'make test', 'local-box'));
    expect(decisionOf(sut)).toEqual({ decision: 'allow', code: 'granted' });
    expect(sut.computerGrant).toBeUndefined();
  });

  it('records each decision with the computer it named, and no key or token', async () => {
    const runId = await newRun();
    const allowed = await authorize(h, exec(runId, 'make test', 'open-box'));
    await authorize(h, exec(runId, 'make test', 'shut-box'));
    const events = await h.store.readStream(`policy-${runId}`);
    expect(events.map((event) => event.data)).toEqual([
      expect.objectContaining({ decision: 'allow', computer: 'open-box', reason: expect.objectContaining({ code: 'granted' }) }),
      expect.objectContaining({ decision: 'deny', computer: 'shut-box', reason: expect.objectContaining({ code: 'computer_policy_denied' }) }),
    ]);
    expect(JSON.stringify(events)).not.toContain(allowed.computerGrant!.split('.')[1]);
  });
});

describe(GrantComputerKey.name, () => {
  let h: PolicyHarness;
  let registry: ComputerRegistryDouble;
  const keyGrant = (computer: string) => h.bus.request(PolicyCommands.computerKeyGrant, { workspaceId: h.workspaceId, computer, purpose: 'probe' });
  const refusal = (work: Promise<unknown>) => work.then(() => null, (error: unknown) => error);

  beforeAll(async () => {
    h = await startPolicy({ policy: { grantSigningKey: SEED, computerRequestTimeoutMs: 300 } });
    registry = new ComputerRegistryDouble(h);
    await registry.start();
    registry.register('build-box', { ...CONSERVATIVE_COMPUTER_POLICY });
    registry.register('local-box', OPEN, 'local');
    registry.answers.set('quiet-box', 'silent');
  });

  afterAll(async () => {
    registry?.stop();
    await h?.close();
  });

  it('grants the key the computer\'s record names for a probe, once, and records the grant without its token', async () => {
    const sut = await keyGrant('build-box');
    expect(sut.credential).toBe('build_box_key');
    const grant = verifyCredentialGrant(sut.token, verifyKey);
    expect(grant).toMatchObject({ workspaceId: h.workspaceId, runId: 'computer-probe', tool: 'computer:build-box', credential: 'build_box_key' });

    const events = await h.store.readStream(policyKeysStream(h.workspaceId));
    expect(events.map((event) => [event.type, event.data])).toEqual([['policy.computer_key_granted', { computer: 'build-box', credential: 'build_box_key', purpose: 'probe', grantId: grant.grantId }]]);
    expect(JSON.stringify(events)).not.toContain(sut.token.split('.')[1]);
    expect(verifyCredentialGrant((await keyGrant('build-box')).token, verifyKey).grantId).not.toBe(grant.grantId);
  });

  it('takes no credential name from the caller', async () => {
    await expect(h.bus.request(PolicyCommands.computerKeyGrant, { workspaceId: h.workspaceId, computer: 'build-box', purpose: 'probe', credential: 'prod_db' } as never)).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });

  it.each([
    ['a local computer', 'local-box', { code: 'computer_without_key', message: 'computer "local-box" is not reached over ssh: it has no key to grant', retryable: false }],
    ['a computer nobody registered', 'missing-box', { code: 'computer_not_found', message: 'no computer "missing-box" is registered in this workspace', retryable: false }],
    ['a silent sandbox', 'quiet-box', { code: 'computer_unavailable', message: 'the sandbox service did not answer for computer "quiet-box"', retryable: true }],
  ])('refuses %s, granting nothing', async (_label, computer, error) => {
    const before = await h.store.streamVersion(policyKeysStream(h.workspaceId));
    expect(await refusal(keyGrant(computer))).toMatchObject(error);
    expect(await h.store.streamVersion(policyKeysStream(h.workspaceId))).toBe(before);
  });

  it('grants a key for listing MCP tools only on a computer whose policy lets commands run unasked', async () => {
    registry.register('open-box', OPEN);
    const listing = (computer: string) => h.bus.request(PolicyCommands.computerKeyGrant, { workspaceId: h.workspaceId, computer, purpose: 'mcp_list' });
    expect(await listing('open-box')).toMatchObject({ credential: expect.any(String), token: expect.any(String) });
    const before = await h.store.streamVersion(policyKeysStream(h.workspaceId));
    const refused = (await refusal(listing('build-box'))) as { code: string; message: string };
    expect(refused).toMatchObject({ code: 'computer_listing_refused', retryable: false });
    expect(refused.message).toContain('asks a person before each command');
    expect(await h.store.streamVersion(policyKeysStream(h.workspaceId))).toBe(before);
  });
});
