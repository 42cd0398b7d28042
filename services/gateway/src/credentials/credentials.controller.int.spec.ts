import { BUS_TOPOLOGY, CommandBus, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { DomainError, VaultCommands, VaultErrorCodes, type CredentialMetadata } from '@packetagent/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import { completeSetup, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { CredentialsController } from './credentials.controller';

type PutRequest = z.output<typeof VaultCommands.putCredential.request>;

/**
 * Stands in for the vault on the real bus (the gateway may not depend on the vault service):
 * keeps metadata per workspace and name, and records what each request carried.
 */
class RecordingVault {
  readonly puts: PutRequest[] = [];
  private readonly stored = new Map<string, CredentialMetadata>();
  private readonly bus: CommandBus;

  constructor(private readonly nc: NatsConnection, topo: Topology) {
    this.bus = new CommandBus(nc, topo);
  }

  async start(): Promise<void> {
    this.bus.handle(VaultCommands.putCredential, async (request) => {
      this.puts.push(request);
      const key = `${request.workspaceId}/${request.name}`;
      const metadata = { name: request.name, version: (this.stored.get(key)?.version ?? 0) + 1, keyId: 'mk-0123456789abcdef', createdBy: request.actor, createdAt: new Date().toISOString() };
      this.stored.set(key, metadata);
      return metadata;
    });
    this.bus.handle(VaultCommands.listCredentials, async (request) => ({
      items: [...this.stored].filter(([key]) => key.startsWith(`${request.workspaceId}/`)).map(([, metadata]) => metadata),
    }));
    this.bus.handle(VaultCommands.deleteCredential, async (request) => {
      const key = `${request.workspaceId}/${request.name}`;
      const metadata = this.stored.get(key);
      if (!metadata) throw new CredentialMissing(request.name);
      this.stored.delete(key);
      return { name: request.name, version: metadata.version, deletedAt: new Date().toISOString() };
    });
    await this.nc.flush();
  }

  stop(): Promise<void> {
    return this.bus.drain();
  }
}

class CredentialMissing extends DomainError {
  readonly code = VaultErrorCodes.notFound;
  constructor(name: string) {
    super(`credential ${name} not found`);
  }
}

describe(CredentialsController.name, () => {
  let sut: GatewayTestApp;
  let vault: RecordingVault;
  let ws: string;
  let ownerKey: string;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const path = (name = '') => `/api/v1/workspaces/${ws}/credentials${name ? `/${name}` : ''}`;
  const keyWithRole = async (role: string) =>
    (await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { headers: bearer(ownerKey), body: { name: role, role } })).body.secret;

  beforeAll(async () => {
    sut = await startGatewayTestApp({ controllers: [CredentialsController] });
    ({ workspaceId: ws, apiKey: ownerKey } = await completeSetup(sut));
    vault = new RecordingVault(sut.app.get<NatsConnection>(NATS_CONNECTION), sut.app.get<Topology>(BUS_TOPOLOGY));
    await vault.start();
  });

  afterAll(async () => {
    await vault.stop();
    await sut.close();
  });

  it('stores a value write-only and lists metadata, never the value', async () => {
    const value = 'xoxb-gateway-route-secret';
    const stored = await sut.request<CredentialMetadata>('PUT', path('slack_token'), { headers: bearer(ownerKey), body: { value } });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ name: 'slack_token', version: 1, createdBy: { kind: 'api_key' } });
    expect(stored.text).not.toContain(value);
    expect(vault.puts).toEqual([expect.objectContaining({ workspaceId: ws, name: 'slack_token', value })]);

    const listed = await sut.request<{ items: CredentialMetadata[] }>('GET', path(), { headers: bearer(await keyWithRole('viewer')) });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((item) => [item.name, item.version])).toEqual([['slack_token', 1]]);
    expect(listed.text).not.toContain(value);
    expect(sut.logger.text()).not.toContain(value);
  });

  it('needs the admin permission to store or delete, and inspect to list', async () => {
    const member = await keyWithRole('member');
    expect((await sut.request('PUT', path('member_try'), { headers: bearer(member), body: { value: 'member-secret' } })).status).toBe(403);
    expect((await sut.request('DELETE', path('slack_token'), { headers: bearer(member) })).status).toBe(403);
    expect((await sut.request('GET', path(), { headers: bearer(member) })).status).toBe(200);
    expect((await sut.request('GET', '/api/v1/workspaces/ws_elsewhere/credentials', { headers: bearer(ownerKey) })).status).toBe(404);
    expect(vault.puts.map((put) => put.name)).not.toContain('member_try');
  });

  it('deletes a credential, answers 404 for one that does not exist, and 400 for a bad name or body', async () => {
    await sut.request('PUT', path('to_delete'), { headers: bearer(ownerKey), body: { value: 'delete-me' } });
    expect((await sut.request('DELETE', path('to_delete'), { headers: bearer(ownerKey) })).status).toBe(204);
    const missing = await sut.request('DELETE', path('to_delete'), { headers: bearer(ownerKey) });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'credential_not_found' });

    const badName = await sut.request('PUT', path('Bad-Name'), { headers: bearer(ownerKey), body: { value: 'x' } });
    expect(badName.status).toBe(400);
    expect((await sut.request('PUT', path('empty_value'), { headers: bearer(ownerKey), body: { value: '' } })).status).toBe(400);
    expect((await sut.request('PUT', path('extra_field'), { headers: bearer(ownerKey), body: { value: 'v', other: 1 } })).status).toBe(400);
  });
});
