import { CommandBus, RemoteCommandError, topology, type Topology } from '@packetagent/bus';
import {
  credentialStream,
  openSealedCredential,
  recipientKeyPair,
  VaultCommands,
  type EventRegistry,
} from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@packetagent/testing';
import { CapturedLog, GrantIssuer, newMasterKey, startVault, vaultTestRegistry, type VaultInstance } from '../testing/vault.testkit';
import { VaultCommandsHandler } from '../vault-commands.handler';
import { ResolveCredential } from './usecases/resolve-credential/resolve-credential';

const admin = { kind: 'user', id: 'user-1' } as const;

describe(VaultCommandsHandler.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let issuer: GrantIssuer;
  let masterKey: string;
  let logs: CapturedLog;
  let instances: VaultInstance[];
  let sut: CommandBus;
  /** Every error a caller was answered with, to be searched for secrets at the end. */
  const refusals: unknown[] = [];
  /** Every secret value stored by a test. */
  const secrets: string[] = [];

  const put = async (workspaceId: string, name: string, value: string) => {
    secrets.push(value);
    return sut.request(VaultCommands.putCredential, { workspaceId, name, value, actor: admin });
  };
  const resolve = async (grant: string) => {
    const recipient = recipientKeyPair();
    const answer = await sut.request(VaultCommands.resolve, { grant, recipientPublicKey: recipient.publicKey });
    return { ...answer, value: openSealedCredential(answer.sealed, recipient.privateKey) };
  };
  const refused = async (work: Promise<unknown>) => {
    const error = await work.then(
      () => null,
      (caught: unknown) => caught,
    );
    refusals.push(error);
    return error;
  };

  beforeAll(async () => {
    db = await createTestDatabase({ max: 20 });
    bus = await createTestBus();
    topo = topology(bus.prefix);
    registry = vaultTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    issuer = new GrantIssuer();
    masterKey = newMasterKey();
    logs = new CapturedLog();
    const options = { mode: 'production' as const, masterKeys: [masterKey], grantSigningKey: issuer.seed, log: logs.log };
    instances = [await startVault({ db, topo, registry }, options), await startVault({ db, topo, registry }, options)];
    sut = new CommandBus(bus.nc, topo);
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    await bus.cleanup();
    await db.drop();
  });

  it('stores write-only, lists metadata, and resolves a granted credential sealed to the caller', async () => {
    const stored = await put('ws_a', 'slack_release_channel', 'xoxb-111-roundTripSecret');
    expect(stored).toMatchObject({ name: 'slack_release_channel', version: 1, createdBy: admin });
    expect(stored).not.toHaveProperty('value');
    const again = await put('ws_a', 'slack_release_channel', 'xoxb-222-roundTripSecretV2');
    expect(again.version).toBe(2);

    const listed = await sut.request(VaultCommands.listCredentials, { workspaceId: 'ws_a' });
    expect(listed.items).toEqual([{ name: 'slack_release_channel', version: 2, keyId: again.keyId, createdBy: admin, createdAt: again.createdAt }]);
    expect(JSON.stringify(listed)).not.toContain('roundTripSecret');

    const answer = await resolve(issuer.grant({ workspaceId: 'ws_a', credential: 'slack_release_channel', runId: 'run-7', tool: 'slack_post' }));
    expect(answer).toMatchObject({ workspaceId: 'ws_a', name: 'slack_release_channel', version: 2, value: 'xoxb-222-roundTripSecretV2' });

    const events = await store.readStream(credentialStream('ws_a', 'slack_release_channel'));
    expect(events.map((event) => [event.type, event.data])).toEqual([
      ['credential.stored', { name: 'slack_release_channel', version: 1, keyId: stored.keyId }],
      ['credential.stored', { name: 'slack_release_channel', version: 2, keyId: again.keyId }],
      ['credential.resolved', expect.objectContaining({ name: 'slack_release_channel', version: 2, runId: 'run-7', tool: 'slack_post' })],
    ]);
    // Only the live version keeps a ciphertext; the replaced one is erased.
    const { rows } = await db.pool.query<{ version: number; erased: boolean }>(
      `SELECT version, ciphertext IS NULL AND wrapped_key IS NULL AS erased FROM vault.credentials WHERE workspace_id = 'ws_a' ORDER BY version`,
    );
    expect(rows).toEqual([{ version: 1, erased: true }, { version: 2, erased: false }]);
  });

  it('refuses a grant used twice, on the same or another vault instance, and under concurrent use', async () => {
    await put('ws_a', 'github_token', 'ghp_singleUseSecret');
    const grant = issuer.grant({ workspaceId: 'ws_a', credential: 'github_token' });
    const request = { grant, recipientPublicKey: recipientKeyPair().publicKey };
    await instances[0]!.app.get(ResolveCredential).execute(request);
    const elsewhere = await refused(instances[1]!.app.get(ResolveCredential).execute(request));
    expect(elsewhere).toMatchObject({ code: 'credential_grant_used' });
    expect(await refused(sut.request(VaultCommands.resolve, request))).toMatchObject({ code: 'credential_grant_used' });

    const racing = issuer.grant({ workspaceId: 'ws_a', credential: 'github_token' });
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => resolve(racing)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const rejections = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as RemoteCommandError] : []));
    refusals.push(...rejections);
    expect(rejections.map((error) => error.code)).toEqual(Array(5).fill('credential_grant_used'));
  });

  it('redeems a computer key grant as policy signs it, in a run or for a probe, once', async () => {
    // The vault keeps any value; a computer's key is one like the others.
    await put('ws_a', 'build_box_key', 'computer-key-value-for-the-spec\nsecond line\n');
    for (const runId of ['run-9', 'computer-probe']) {
      const grant = issuer.grant({ workspaceId: 'ws_a', credential: 'build_box_key', runId, tool: 'computer:build-box' });
      expect(await resolve(grant)).toMatchObject({ name: 'build_box_key', value: 'computer-key-value-for-the-spec\nsecond line\n' });
      expect(await refused(resolve(grant))).toMatchObject({ code: 'credential_grant_used' });
    }
    const events = await store.readStream(credentialStream('ws_a', 'build_box_key'));
    expect(events.filter((event) => event.type === 'credential.resolved').map((event) => event.data)).toEqual([
      expect.objectContaining({ runId: 'run-9', tool: 'computer:build-box' }),
      expect.objectContaining({ runId: 'computer-probe', tool: 'computer:build-box' }),
    ]);
  });

  it('refuses an expired grant, a forged grant, and a grant for a credential that is not in its workspace', async () => {
    await put('ws_a', 'ops_hook', 'hook-secret-value-123');
    const expired = await refused(resolve(issuer.grant({ workspaceId: 'ws_a', credential: 'ops_hook', expiresAt: new Date(Date.now() - 1_000).toISOString() })));
    expect(expired).toMatchObject({ code: 'credential_grant_expired' });

    const forged = await refused(resolve(new GrantIssuer().grant({ workspaceId: 'ws_a', credential: 'ops_hook' })));
    expect(forged).toMatchObject({ code: 'credential_grant_invalid' });
    const [body, signature] = issuer.grant({ workspaceId: 'ws_b', credential: 'ops_hook' }).split('.');
    const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), workspaceId: 'ws_a' })).toString('base64url');
    expect(await refused(resolve(`${widened}.${signature}`))).toMatchObject({ code: 'credential_grant_invalid' });

    expect(await refused(resolve(issuer.grant({ workspaceId: 'ws_b', credential: 'ops_hook' })))).toMatchObject({ code: 'credential_not_found' });
    const badKey = await refused(sut.request(VaultCommands.resolve, { grant: issuer.grant({ workspaceId: 'ws_a', credential: 'ops_hook' }), recipientPublicKey: 'AAAA' }));
    expect(badKey).toMatchObject({ code: 'invalid_recipient_key' });
  });

  it('deletes a credential: its ciphertext is erased and grants for it are refused', async () => {
    await put('ws_a', 'to_delete', 'delete-me-secret-42');
    const deleted = await sut.request(VaultCommands.deleteCredential, { workspaceId: 'ws_a', name: 'to_delete', actor: admin });
    expect(deleted).toMatchObject({ name: 'to_delete', version: 1 });
    expect(await refused(resolve(issuer.grant({ workspaceId: 'ws_a', credential: 'to_delete' })))).toMatchObject({ code: 'credential_not_found' });
    expect(await refused(sut.request(VaultCommands.deleteCredential, { workspaceId: 'ws_a', name: 'to_delete', actor: admin }))).toMatchObject({ code: 'credential_not_found' });
    const listed = await sut.request(VaultCommands.listCredentials, { workspaceId: 'ws_a' });
    expect(listed.items.map((item) => item.name)).not.toContain('to_delete');
    const { rows } = await db.pool.query(`SELECT 1 FROM vault.credentials WHERE name = 'to_delete' AND ciphertext IS NOT NULL`);
    expect(rows).toHaveLength(0);
    expect((await put('ws_a', 'to_delete', 'recreated-secret-43')).version).toBe(2);
  });

  it('refuses a tampered ciphertext and a record copied onto another name or workspace, and keeps the grant unused', async () => {
    await put('ws_a', 'tampered', 'tamper-target-secret');
    await db.pool.query(`UPDATE vault.credentials SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) WHERE name = 'tampered' AND deleted_at IS NULL`);
    const grant = issuer.grant({ workspaceId: 'ws_a', credential: 'tampered' });
    expect(await refused(resolve(grant))).toMatchObject({ code: 'credential_undecryptable', message: 'credential tampered: the stored value does not authenticate' });
    const { rows } = await db.pool.query(`SELECT 1 FROM vault.used_grants WHERE credential = 'tampered'`);
    expect(rows).toHaveLength(0);

    await put('ws_a', 'source_secret', 'moved-ciphertext-secret');
    await put('ws_a', 'decoy', 'decoy-secret-value');
    await put('ws_b', 'source_secret', 'other-workspace-secret');
    const copy = (target: { workspace: string; name: string }) =>
      db.pool.query(
        `UPDATE vault.credentials t SET ciphertext = s.ciphertext, iv = s.iv, tag = s.tag, wrapped_key = s.wrapped_key, key_id = s.key_id
           FROM vault.credentials s
          WHERE s.workspace_id = 'ws_a' AND s.name = 'source_secret' AND s.deleted_at IS NULL
            AND t.workspace_id = $1 AND t.name = $2 AND t.deleted_at IS NULL`,
        [target.workspace, target.name],
      );
    await copy({ workspace: 'ws_a', name: 'decoy' });
    await copy({ workspace: 'ws_b', name: 'source_secret' });
    expect(await refused(resolve(issuer.grant({ workspaceId: 'ws_a', credential: 'decoy' })))).toMatchObject({ code: 'credential_undecryptable' });
    expect(await refused(resolve(issuer.grant({ workspaceId: 'ws_b', credential: 'source_secret' })))).toMatchObject({ code: 'credential_undecryptable' });
    expect((await resolve(issuer.grant({ workspaceId: 'ws_a', credential: 'source_secret' }))).value).toBe('moved-ciphertext-secret');
  });

  it('refuses to decrypt under the wrong master key', async () => {
    await put('ws_c', 'wrong_key_target', 'wrong-key-secret-value');
    const stranger = await startVault({ db, topo: topology(`${bus.prefix}x`), registry }, { mode: 'production', masterKeys: [newMasterKey()], grantSigningKey: issuer.seed, log: logs.log });
    try {
      const request = { grant: issuer.grant({ workspaceId: 'ws_c', credential: 'wrong_key_target' }), recipientPublicKey: recipientKeyPair().publicKey };
      expect(await refused(stranger.app.get(ResolveCredential).execute(request))).toMatchObject({ code: 'master_key_unavailable' });
      // A wrapped data key altered in place no longer authenticates under the right master key either.
      await db.pool.query(`UPDATE vault.credentials SET wrapped_key = set_byte(wrapped_key, 20, get_byte(wrapped_key, 20) # 1) WHERE name = 'wrong_key_target' AND deleted_at IS NULL`);
      const retry = { grant: issuer.grant({ workspaceId: 'ws_c', credential: 'wrong_key_target' }), recipientPublicKey: recipientKeyPair().publicKey };
      expect(await refused(sut.request(VaultCommands.resolve, retry))).toMatchObject({ code: 'credential_undecryptable', message: expect.stringContaining('data key') });
    } finally {
      await stranger.close();
    }
  });

  it('leaves no secret value in any event, log line or error message', async () => {
    const value = 'sk-live-VerySecretScanValue-0042';
    await put('ws_scan', 'scan_target', value);
    expect((await resolve(issuer.grant({ workspaceId: 'ws_scan', credential: 'scan_target' }))).value).toBe(value);
    expect(await refused(resolve(issuer.grant({ workspaceId: 'ws_scan', credential: 'scan_target', expiresAt: new Date(Date.now() - 1).toISOString() })))).not.toBeNull();

    const { rows: events } = await db.pool.query<{ type: string; text: string }>(`SELECT type, data::text || metadata::text AS text FROM events`);
    expect(events.length).toBeGreaterThan(10);
    const messages = refusals.map((error) => (error instanceof Error ? `${error.name} ${error.message} ${JSON.stringify(error)}` : String(error)));
    expect(messages.length).toBeGreaterThan(15);
    expect(logs.lines.length).toBeGreaterThan(10);
    const { rows: stored } = await db.pool.query<{ text: string }>(`SELECT encode(coalesce(ciphertext, ''), 'escape') AS text FROM vault.credentials`);
    for (const secret of secrets) {
      expect(events.filter((event) => event.text.includes(secret))).toEqual([]);
      expect(logs.lines.filter((line) => line.includes(secret))).toEqual([]);
      expect(messages.filter((message) => message.includes(secret))).toEqual([]);
      expect(stored.filter((row) => row.text.includes(secret))).toEqual([]);
    }
  });
});
