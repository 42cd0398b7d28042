import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus, topology, type Topology } from '@packetagent/bus';
import { openSealedCredential, recipientKeyPair, vaultStream, VaultCommands, type EventRegistry } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@packetagent/testing';
import { ResolveCredential } from '../credentials/usecases/resolve-credential/resolve-credential';
import { MasterKeyConfigurationError } from '../shared/errors';
import { CapturedLog, GrantIssuer, newMasterKey, startVault, vaultTestRegistry, type VaultInstance } from '../testing/vault.testkit';
import type { VaultModuleOptions } from '../vault.options';
import { masterKeyId } from './master-key-ring';
import { RotateMasterKey } from './usecases/rotate-master-key/rotate-master-key';

const admin = { kind: 'user', id: 'user-1' } as const;
const idOf = (key: string) => masterKeyId(Buffer.from(key, 'base64'));

describe(RotateMasterKey.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let registry: EventRegistry;
  let issuer: GrantIssuer;
  let logs: CapturedLog;
  let started: VaultInstance[];
  let prefixes = 0;

  /** A vault with its own bus prefix, so a test reaches exactly the instance it means. */
  const vault = async (options: Omit<VaultModuleOptions, 'grantSigningKey' | 'log'>) => {
    const topo: Topology = topology(`${bus.prefix}r${prefixes++}`);
    const instance = await startVault({ db, topo, registry }, { grantSigningKey: issuer.seed, log: logs.log, ...options });
    started.push(instance);
    return { instance, bus: new CommandBus(bus.nc, topo) };
  };
  const resolveOn = async (instance: VaultInstance, workspaceId: string, credential: string) => {
    const recipient = recipientKeyPair();
    const answer = await instance.app.get(ResolveCredential).execute({ grant: issuer.grant({ workspaceId, credential }), recipientPublicKey: recipient.publicKey });
    return openSealedCredential(answer.sealed, recipient.privateKey);
  };

  beforeAll(async () => {
    db = await createTestDatabase({ max: 30 });
    bus = await createTestBus();
    registry = vaultTestRegistry();
    issuer = new GrantIssuer();
    logs = new CapturedLog();
    started = [];
  });

  afterAll(async () => {
    await Promise.all(started.map((instance) => instance.close()));
    await bus.cleanup();
    await db.drop();
  });

  it('re-wraps every credential under the new key while they stay readable, after which the old key can be dropped', async () => {
    const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
    const before = await vault({ mode: 'production', masterKeys: [oldKey] });
    const values = new Map<string, string>();
    for (const workspaceId of ['ws_r1', 'ws_r2']) {
      for (let index = 0; index < 5; index++) {
        const value = `rotation-secret-${workspaceId}-${index}`;
        values.set(`${workspaceId}/cred_${index}`, value);
        await before.bus.request(VaultCommands.putCredential, { workspaceId, name: `cred_${index}`, value, actor: admin });
      }
    }

    const during = await vault({ mode: 'production', masterKeys: [newKey, oldKey], rotationBatchSize: 3 });
    const reads = [...values].map(async ([path, value]) => {
      const [workspaceId, name] = path.split('/') as [string, string];
      expect(await resolveOn(during.instance, workspaceId, name)).toBe(value);
    });
    const [result] = await Promise.all([during.bus.request(VaultCommands.rotate, { actor: admin }), ...reads]);
    expect(result).toEqual({ toKeyId: idOf(newKey), rewrapped: [{ fromKeyId: idOf(oldKey), count: 10 }], remaining: 0 });

    const { rows } = await db.pool.query<{ key_id: string }>(`SELECT DISTINCT key_id FROM vault.credentials WHERE deleted_at IS NULL`);
    expect(rows).toEqual([{ key_id: idOf(newKey) }]);
    const store = new PostgresEventStore(db.pool, { registry });
    const rotated = (await store.readStream(vaultStream('ws_r1'))).map((event) => event.data as { fromKeyId: string; toKeyId: string; count: number });
    expect(rotated.every((data) => data.fromKeyId === idOf(oldKey) && data.toKeyId === idOf(newKey))).toBe(true);
    expect(rotated.reduce((sum, data) => sum + data.count, 0)).toBe(5);

    const after = await vault({ mode: 'production', masterKeys: [newKey] });
    for (const [path, value] of values) {
      const [workspaceId, name] = path.split('/') as [string, string];
      expect(await resolveOn(after.instance, workspaceId, name)).toBe(value);
    }
    const stale = await resolveOn(before.instance, 'ws_r1', 'cred_0').catch((error: unknown) => error);
    expect(stale).toMatchObject({ code: 'master_key_unavailable' });
    // A replica started with only the old key says at once that it cannot read what is stored.
    await vault({ mode: 'production', masterKeys: [oldKey] });
    expect(logs.text()).toMatch(/error live credentials are wrapped under a master key this vault does not have .*"count":10/);

    const again = await after.bus.request(VaultCommands.rotate, { actor: admin });
    expect(again).toEqual({ toKeyId: idOf(newKey), rewrapped: [], remaining: 0 });
    for (const value of values.values()) expect(logs.text()).not.toContain(value);
  });

  it('refuses to start in production without a master key or with a weak one', async () => {
    await expect(vault({ mode: 'production' })).rejects.toThrow(MasterKeyConfigurationError);
    await expect(vault({ mode: 'production', masterKeys: [Buffer.alloc(32, 1).toString('base64')] })).rejects.toThrow('every byte is the same');
    await expect(vault({ mode: 'production', masterKeys: [Buffer.alloc(16, 1).toString('base64')] })).rejects.toThrow('16 bytes, not 32');
  });

  it('starts in development with a generated key kept under the data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pa-vault-dev-'));
    try {
      const dev = await vault({ mode: 'development', dataDir });
      expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
      expect(logs.text()).toMatch(/warn VAULT DEVELOPMENT MODE/);
      const stored = await dev.bus.request(VaultCommands.putCredential, { workspaceId: 'ws_dev', name: 'dev_token', value: 'dev-secret-value', actor: admin });
      expect(await resolveOn(dev.instance, 'ws_dev', 'dev_token')).toBe('dev-secret-value');
      expect(stored.keyId).toMatch(/^mk-[0-9a-f]{16}$/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
