import { CommandBus, RemoteCommandError, topology, type Topology } from '@packetagent/bus';
import { OAuthCommands, OAuthErrorCodes, openSealedCredential, recipientKeyPair, VaultCommands, credentialStream, type EventRegistry } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, startOAuthMcpServer, type OAuthMcpServer, type TestBus, type TestDatabase } from '@packetagent/testing';
import { CapturedLog, GrantIssuer, newMasterKey, startVault, vaultTestRegistry, type VaultInstance } from '../testing/vault.testkit';
import { OAuthCommandsHandler } from './oauth-commands.handler';

const operator = { kind: 'user', id: 'user-7' } as const;
const REDIRECT = 'http://127.0.0.1:9/api/v1/mcp/oauth/callback';

describe(OAuthCommandsHandler.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let issuer: GrantIssuer;
  let logs: CapturedLog;
  let instances: VaultInstance[];
  let sut: CommandBus;
  let peer: OAuthMcpServer;
  let strict: OAuthMcpServer;

  /** Plays the operator's browser: opens the consent URL, and hands the redirect's answer to the vault. */
  const connect = async (workspaceId: string, credential: string, oauth: { clientId?: string } = {}) => {
    const begun = await sut.request(OAuthCommands.begin, { workspaceId, resource: peer.url, oauth: { credential, scopes: [], ...oauth }, redirectUri: REDIRECT, returnTo: '/console/workers/w1', actor: operator });
    const consent = await fetch(begun.authorizationUrl, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    const completed = await sut.request(OAuthCommands.complete, { state: back.searchParams.get('state') ?? '', code: back.searchParams.get('code') ?? '' });
    return { begun, completed, back };
  };
  const resolve = async (workspaceId: string, credential: string, audience: string | null = peer.url) => {
    const recipient = recipientKeyPair();
    const grant = issuer.grant({ workspaceId, credential, tool: 'mcp' });
    const answer = await sut.request(VaultCommands.resolve, { grant, recipientPublicKey: recipient.publicKey, ...(audience ? { audience } : {}) });
    return { ...answer, token: openSealedCredential(answer.sealed, recipient.privateKey) };
  };
  const refusal = (work: Promise<unknown>) => work.then(() => null, (caught: unknown) => caught as RemoteCommandError);

  beforeAll(async () => {
    db = await createTestDatabase({ max: 20 });
    bus = await createTestBus();
    topo = topology(bus.prefix);
    registry = vaultTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    issuer = new GrantIssuer();
    logs = new CapturedLog();
    peer = await startOAuthMcpServer();
    strict = await startOAuthMcpServer({ dynamicRegistration: false });
    const options = { mode: 'production' as const, masterKeys: [newMasterKey()], grantSigningKey: issuer.seed, log: logs.log, oauth: { allowPrivate: [peer.host, strict.host], refreshMarginSeconds: 60 } };
    instances = [await startVault({ db, topo, registry }, options), await startVault({ db, topo, registry }, options)];
    sut = new CommandBus(bus.nc, topo);
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    await peer.close();
    await strict.close();
    await bus.cleanup();
    await db.drop();
  });

  beforeEach(() => {
    peer.accessTokenLifetimeSeconds = 3600;
    peer.refuseRefresh = false;
  });

  it('connects with PKCE and a dynamically registered client, and keeps only facts outside the ciphertext', async () => {
    const { begun, completed, back } = await connect('ws_a', 'github_mcp');
    const consent = new URL(begun.authorizationUrl);
    expect(consent.searchParams.get('code_challenge_method')).toBe('S256');
    expect(consent.searchParams.get('resource')).toBe(peer.url);
    expect(begun).toMatchObject({ issuer: peer.issuer, registered: true });
    expect(completed).toMatchObject({ workspaceId: 'ws_a', returnTo: '/console/workers/w1', connection: { credential: 'github_mcp', version: 1, resource: peer.url, state: 'connected', refreshable: true, connectedBy: operator } });
    expect(peer.stats).toMatchObject({ registrations: 1, codeExchanges: 1 });

    const listed = await sut.request(OAuthCommands.connections, { workspaceId: 'ws_a' });
    expect(listed.items.map((item) => item.credential)).toEqual(['github_mcp']);
    const token = peer.issued.at(-1)!.accessToken;
    expect(JSON.stringify(listed)).not.toContain(token);
    const stored = await store.readStream(credentialStream('ws_a', 'github_mcp'));
    expect(stored.map((event) => [event.type, event.data])).toEqual([['credential.stored', expect.objectContaining({ version: 1, kind: 'oauth', oauth: 'connected' })]]);
    expect(JSON.stringify(stored)).not.toContain(token);
    const { rows } = await db.pool.query<{ oauth: unknown }>(`SELECT oauth FROM vault.credentials WHERE workspace_id = 'ws_a' AND name = 'github_mcp'`);
    expect(JSON.stringify(rows)).not.toContain(token);

    // A state is redeemed once.
    const again = await refusal(sut.request(OAuthCommands.complete, { state: back.searchParams.get('state') ?? '', code: back.searchParams.get('code') ?? '' }));
    expect(again?.code).toBe(OAuthErrorCodes.flowUnknown);
  });

  it('hands a run the access token for the connected server only, never the refresh token', async () => {
    await connect('ws_b', 'docs_mcp');
    const { token, version } = await resolve('ws_b', 'docs_mcp');
    expect(token).toBe(peer.issued.at(-1)!.accessToken);
    expect(version).toBe(1);
    const elsewhere = await refusal(resolve('ws_b', 'docs_mcp', 'https://mcp.example.com/mcp'));
    expect(elsewhere?.code).toBe(OAuthErrorCodes.audienceMismatch);
    const unnamed = await refusal(resolve('ws_b', 'docs_mcp', null));
    expect(unnamed?.code).toBe(OAuthErrorCodes.audienceMismatch);
    const listing = recipientKeyPair();
    const forListing = await sut.request(OAuthCommands.token, { workspaceId: 'ws_b', credential: 'docs_mcp', audience: `${peer.url}/`, recipientPublicKey: listing.publicKey });
    expect(openSealedCredential(forListing.sealed, listing.privateKey)).toBe(token);
  });

  it('hands out a token with time left as it is', async () => {
    await connect('ws_c', 'jira_mcp');
    const refreshes = peer.stats.refreshes;
    expect((await resolve('ws_c', 'jira_mcp')).token).toBe(peer.issued.at(-1)!.accessToken);
    expect(peer.stats.refreshes).toBe(refreshes);
  });

  it('refreshes an expired token once before handing it out, however many replicas ask at once, and keeps the rotated refresh token', async () => {
    peer.accessTokenLifetimeSeconds = 0;
    await connect('ws_d', 'linear_mcp');
    const expired = peer.issued.at(-1)!.accessToken;
    // Refreshed into another token that is expired on issue: the next caller refreshes again, with the rotated refresh token.
    const once = await resolve('ws_d', 'linear_mcp');
    expect(once.token).not.toBe(expired);
    peer.accessTokenLifetimeSeconds = 3600;
    const refreshes = peer.stats.refreshes;
    const answers = await Promise.all(Array.from({ length: 8 }, () => resolve('ws_d', 'linear_mcp')));
    const tokens = new Set(answers.map((answer) => answer.token));
    expect(tokens.size).toBe(1);
    expect(peer.stats.refreshes).toBe(refreshes + 1);
    expect(peer.stats.refusedRefreshes).toBe(0);
    expect(peer.issued.at(-1)).toMatchObject({ via: 'refresh', accessToken: [...tokens][0] });
    expect(new Set(answers.map((answer) => answer.version))).toEqual(new Set([3]));
    const events = await store.readStream(credentialStream('ws_d', 'linear_mcp'));
    expect(events.filter((event) => event.type === 'credential.stored').map((event) => (event.data as { oauth?: string }).oauth)).toEqual(['connected', 'refreshed', 'refreshed']);
    expect(JSON.stringify(events)).not.toContain([...tokens][0]);
  });

  it('says a connection must be connected again when the authorization server refuses the refresh, until it is', async () => {
    peer.accessTokenLifetimeSeconds = 0;
    await connect('ws_e', 'notion_mcp');
    peer.refuseRefresh = true;
    const refused = await refusal(resolve('ws_e', 'notion_mcp'));
    expect(refused?.code).toBe(OAuthErrorCodes.reconnectRequired);
    expect(refused?.message).toContain('invalid_grant');
    const attempts = peer.stats.refusedRefreshes;
    // Remembered: the next caller is told at once, without asking the authorization server again.
    const again = await refusal(resolve('ws_e', 'notion_mcp'));
    expect(again?.code).toBe(OAuthErrorCodes.reconnectRequired);
    expect(peer.stats.refusedRefreshes).toBe(attempts);
    const listed = await sut.request(OAuthCommands.connections, { workspaceId: 'ws_e' });
    expect(listed.items[0]).toMatchObject({ credential: 'notion_mcp', state: 'reconnect_required', reason: expect.stringContaining('invalid_grant') });

    peer.refuseRefresh = false;
    peer.accessTokenLifetimeSeconds = 3600;
    await connect('ws_e', 'notion_mcp');
    expect((await resolve('ws_e', 'notion_mcp')).token).toBe(peer.issued.at(-1)!.accessToken);
    expect((await sut.request(OAuthCommands.connections, { workspaceId: 'ws_e' })).items[0]).toMatchObject({ state: 'connected', reason: null });
  });

  it('uses a pre-registered client where the authorization server offers no registration, and says what is missing without one', async () => {
    const begin = (oauth: { credential: string; scopes: string[]; clientId?: string }) => sut.request(OAuthCommands.begin, { workspaceId: 'ws_f', resource: strict.url, oauth, redirectUri: REDIRECT, actor: operator });
    const missing = await refusal(begin({ credential: 'strict_mcp', scopes: [] }));
    expect(missing?.code).toBe(OAuthErrorCodes.clientRequired);
    const clientId = strict.preRegister(REDIRECT);
    const begun = await begin({ credential: 'strict_mcp', scopes: ['tools'], clientId });
    expect(begun).toMatchObject({ registered: false, clientId });
    expect(new URL(begun.authorizationUrl).searchParams.get('scope')).toBe('tools');
  });

  it('refuses a private address nobody allowlisted, and ends the flow of an operator who declined', async () => {
    const closed = await refusal(sut.request(OAuthCommands.begin, { workspaceId: 'ws_g', resource: 'http://127.0.0.1:1/mcp', oauth: { credential: 'private_mcp', scopes: [] }, redirectUri: REDIRECT, actor: operator }));
    expect(closed?.code).toBe(OAuthErrorCodes.discoveryFailed);
    expect(closed?.message).toMatch(/loopback|private|not allowed/);

    const begun = await sut.request(OAuthCommands.begin, { workspaceId: 'ws_g', resource: peer.url, oauth: { credential: 'declined_mcp', scopes: [] }, redirectUri: REDIRECT, actor: operator });
    const state = new URL(begun.authorizationUrl).searchParams.get('state') ?? '';
    const declined = await refusal(sut.request(OAuthCommands.complete, { state, error: 'access_denied', errorDescription: 'the operator declined' }));
    expect(declined?.code).toBe(OAuthErrorCodes.authorizationDenied);
    expect(declined?.message).toContain('access_denied');
    expect((await sut.request(OAuthCommands.connections, { workspaceId: 'ws_g' })).items).toEqual([]);
  });

  it('never logs a token', () => {
    const logged = JSON.stringify(logs.lines);
    for (const issued of peer.issued) expect(logged).not.toContain(issued.accessToken);
  });
});
