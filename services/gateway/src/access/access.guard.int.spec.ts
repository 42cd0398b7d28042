import { Controller, Get, Post } from '@nestjs/common';
import { Authenticated, RequirePermission } from './access.decorators';
import { AccessGuard } from './access.guard';
import { Principal, type WorkspacePrincipal } from './principal';
import { completeSetup, insertUser, signIn, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';

/** Stands for a controller another module adds under a workspace. */
@Controller('api/v1/workspaces/:ws/widgets')
class WidgetsController {
  @Get()
  @RequirePermission('inspect')
  list(@Principal() principal: WorkspacePrincipal): WorkspacePrincipal {
    return principal;
  }

  @Post('deploy')
  @RequirePermission('deploy')
  deploy(@Principal() principal: WorkspacePrincipal): WorkspacePrincipal {
    return principal;
  }
}

@Controller('api/v1/whoami')
class WhoAmIController {
  @Get()
  @Authenticated()
  who(@Principal() principal: Principal): Principal {
    return principal;
  }
}

describe(AccessGuard.name, () => {
  let sut: GatewayTestApp;
  let ws: string;
  let ownerKey: string;
  const keys: Record<string, { id: string; secret: string }> = {};
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    sut = await startGatewayTestApp({ controllers: [WidgetsController, WhoAmIController] });
    ({ workspaceId: ws, apiKey: ownerKey } = await completeSetup(sut));
    for (const role of ['viewer', 'member', 'admin']) {
      const created = await sut.request<{ id: string; secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { headers: bearer(ownerKey), body: { name: role, role } });
      keys[role] = created.body;
    }
  });

  afterAll(async () => {
    await sut.close();
  });

  it('gives a workspace route the principal with the routed workspace, the role and the actor', async () => {
    const answer = await sut.request('GET', `/api/v1/workspaces/${ws}/widgets`, { headers: bearer(keys['viewer']!.secret) });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ kind: 'api_key', id: keys['viewer']!.id, workspaceId: ws, role: 'viewer', actor: { kind: 'api_key', id: keys['viewer']!.id } });
  });

  it('maps roles to permissions: deploy is refused to viewers and members with 403, allowed to admins', async () => {
    for (const role of ['viewer', 'member']) {
      const answer = await sut.request('POST', `/api/v1/workspaces/${ws}/widgets/deploy`, { headers: bearer(keys[role]!.secret) });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ code: 'permission_denied' });
    }
    expect((await sut.request('POST', `/api/v1/workspaces/${ws}/widgets/deploy`, { headers: bearer(keys['admin']!.secret) })).status).toBe(201);
  });

  it('resolves a signed-in user\'s role from the membership', async () => {
    const owner = await signIn(sut, 'owner@example.com', 'correct horse battery staple');
    const answer = await sut.request<WorkspacePrincipal>('GET', `/api/v1/workspaces/${ws}/widgets`, { headers: owner.headers(false) });
    expect(answer.body).toMatchObject({ kind: 'user', workspaceId: ws, role: 'owner', actor: { kind: 'user', id: answer.body.id } });
  });

  it('answers 404, never 403, to a caller without access, even for a route it could not use anyway', async () => {
    await insertUser(sut, 'outsider@example.com', 'outsider password');
    const outsider = await signIn(sut, 'outsider@example.com', 'outsider password');
    const answer = await sut.request('POST', `/api/v1/workspaces/${ws}/widgets/deploy`, { headers: outsider.headers() });
    expect(answer.status).toBe(404);
  });

  it('gives an @Authenticated route the caller without a workspace for users, and the key\'s workspace for keys', async () => {
    const owner = await signIn(sut, 'owner@example.com', 'correct horse battery staple');
    const user = await sut.request<Principal>('GET', '/api/v1/whoami', { headers: owner.headers(false) });
    expect(user.body).toMatchObject({ kind: 'user', workspaceId: null, role: null });
    const key = await sut.request<Principal>('GET', '/api/v1/whoami', { headers: bearer(keys['member']!.secret) });
    expect(key.body).toMatchObject({ kind: 'api_key', workspaceId: ws, role: 'member' });
  });

  it('prefers the Authorization header over a cookie sent alongside it', async () => {
    const owner = await signIn(sut, 'owner@example.com', 'correct horse battery staple');
    const answer = await sut.request<Principal>('GET', '/api/v1/whoami', { headers: { ...owner.headers(false), ...bearer(keys['viewer']!.secret) } });
    expect(answer.body).toMatchObject({ kind: 'api_key', id: keys['viewer']!.id });
  });
});
