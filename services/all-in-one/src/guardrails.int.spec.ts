import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandBus } from '@packetagent/bus';
import { BudgetCommands, openSealedCredential, PolicyCommands, recipientKeyPair, VaultCommands } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { bearer, startTestApp, type TestApp } from './testing/app.testkit';

const EXAMPLE = readFileSync(join(__dirname, '../../../examples/release-audit.worker.yaml'), 'utf8');

describe('guardrails over HTTP', () => {
  let sut: TestApp;
  let ws: string;
  let owner: string;
  let viewer: string;
  let runId: string;
  let grants: { credential: string; token: string }[] = [];
  const SECRET = 'xoxb-1234567890-very-secret-slack-token';

  beforeAll(async () => {
    sut = await startTestApp();
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: sut.setupToken, email: 'approver@example.com', password: 'correct horse battery staple', workspace: 'Approvals' },
    });
    ws = setup.body.workspaceId;
    owner = setup.body.apiKey;
    viewer = (await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { body: { name: 'v', role: 'viewer' }, headers: bearer(owner) })).body.secret;
    const worker = await sut.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/workers`, { body: { name: 'release-audit' }, headers: bearer(owner) });
    await sut.request('POST', `/api/v1/workspaces/${ws}/workers/${worker.body.id}/versions`, { raw: EXAMPLE, headers: { ...bearer(owner), 'content-type': 'application/yaml' } });
    const deployment = await sut.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/deployments`, { body: { workerId: worker.body.id, acceptMissing: true }, headers: bearer(owner) });
    runId = (await sut.request<{ runId: string }>('POST', `/api/v1/workspaces/${ws}/deployments/${deployment.body.id}/runs`, { body: {}, headers: bearer(owner) })).body.runId;
    const stored = await sut.request('PUT', `/api/v1/workspaces/${ws}/credentials/slack_release_channel`, { body: { value: SECRET }, headers: bearer(owner) });
    expect(stored.status).toBe(200);
  });
  afterAll(() => sut.close());

  const authorize = () =>
    sut.app.get(CommandBus).request(PolicyCommands.authorize, {
      workspaceId: ws,
      runId,
      tool: 'slack_post',
      verb: 'post',
      resource: '#releases',
      credentials: ['slack_release_channel'],
      callDigest: createHash('sha256').update('post #releases: release 2026.11.3 is missing evidence').digest('hex'),
      arguments: { channel: '#releases', text: 'release 2026.11.3 is missing evidence' },
    });

  it('lists a call that needs approval, lets an approver (not a viewer) approve it once, and the call is then allowed', async () => {
    // Policy learns of the run from run.admitted through the relay.
    const asked = await eventually(async () => {
      const result = await authorize();
      return result.decision !== 'deny' && result;
    }, { what: 'policy to know the run' });
    expect(asked.decision).toBe('approval_required');

    const open = await sut.request<{ items: { id: string; tool: string; state: string }[] }>('GET', `/api/v1/workspaces/${ws}/attention?state=open`, { headers: bearer(viewer) });
    expect(open.status).toBe(200);
    expect(open.body.items).toEqual([expect.objectContaining({ id: asked.approvalId, tool: 'slack_post', state: 'open' })]);

    const byViewer = await sut.request('POST', `/api/v1/workspaces/${ws}/attention/${asked.approvalId}/approve`, { body: { scope: 'once' }, headers: bearer(viewer) });
    expect(byViewer.status).toBe(403);
    const approved = await sut.request('POST', `/api/v1/workspaces/${ws}/attention/${asked.approvalId}/approve`, { body: { scope: 'once' }, headers: bearer(owner) });
    expect(approved.status).toBe(200);
    const twice = await sut.request<{ code: string }>('POST', `/api/v1/workspaces/${ws}/attention/${asked.approvalId}/reject`, { body: { reason: 'too late' }, headers: bearer(owner) });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('attention_already_answered');

    const allowed = await authorize();
    expect(allowed.decision).toBe('allow');
    expect(allowed.credentialGrants?.map((g) => g.credential)).toEqual(['slack_release_channel']);
    grants = allowed.credentialGrants ?? [];
  });

  it('lists credentials as metadata only, and resolves one once with the grant policy issued, sealed to the caller', async () => {
    const listed = await sut.request<{ items: { name: string; version: number }[] }>('GET', `/api/v1/workspaces/${ws}/credentials`, { headers: bearer(viewer) });
    expect(listed.body.items).toEqual([expect.objectContaining({ name: 'slack_release_channel', version: 1 })]);
    expect(listed.text).not.toContain(SECRET);
    const byViewer = await sut.request('PUT', `/api/v1/workspaces/${ws}/credentials/other`, { body: { value: 'x' }, headers: bearer(viewer) });
    expect(byViewer.status).toBe(403);

    const recipient = recipientKeyPair();
    const bus = sut.app.get(CommandBus);
    const resolved = await bus.request(VaultCommands.resolve, { grant: grants[0]!.token, recipientPublicKey: recipient.publicKey });
    expect(openSealedCredential(resolved.sealed, recipient.privateKey)).toBe(SECRET);
    await expect(bus.request(VaultCommands.resolve, { grant: grants[0]!.token, recipientPublicKey: recipient.publicKey })).rejects.toMatchObject({
      code: 'credential_grant_used',
    });

    // Nowhere in the record: every event of the installation, as stored.
    const { rows } = await sut.db.pool.query<{ text: string }>(`SELECT data::text || metadata::text AS text FROM events`);
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.filter((row) => row.text.includes(SECRET))).toEqual([]);
  });

  it('shows a run\'s budget hold per scope, and refuses a reservation beyond the per-run limit with the numbers', async () => {
    const bus = sut.app.get(CommandBus);
    const reserve = (amount: number, key: string) =>
      bus.request(BudgetCommands.reserve, {
        workspaceId: ws,
        runId,
        amounts: [{ unit: 'usd', amount }],
        ttlSeconds: 300,
        idempotencyKey: key,
        actor: { kind: 'service', id: 'supervisor' },
      });
    // The example grants 0.50 USD per run, 5 USD per deployment per day (micro-dollars here).
    const held = await eventually(async () => {
      const result = await reserve(300_000, 'turn-1').catch(() => null);
      return result?.state === 'held' && result;
    }, { what: 'the budget service to know the run' });
    expect(held.state).toBe('held');
    const refused = await reserve(300_000, 'turn-2');
    expect(refused).toMatchObject({ state: 'refused' });

    const usage = await sut.request<{ scopes: { kind: string; id: string; unit: string; limit: number; held: number }[] }>(
      'GET',
      `/api/v1/workspaces/${ws}/budgets?kind=run&id=${runId}`,
      { headers: bearer(viewer) },
    );
    expect(usage.status).toBe(200);
    // The example also limits Slack posts to one per run.
    expect(usage.body.scopes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'run', id: runId, unit: 'usd', window: 'run', limit: 500_000, held: 300_000, spent: 0 }),
        expect.objectContaining({ kind: 'run', id: runId, unit: 'count:slack_post', window: 'run', limit: 1, held: 0 }),
      ]),
    );
    expect(usage.body.scopes).toHaveLength(2);
  });
});
