import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import type { OAuthCommands } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { encryptValue } from '../../crypto/envelope-cipher';
import { MASTER_KEY_RING, type MasterKeyRing } from '../../keys/master-key-ring';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../../vault.options';
import { OAuthClient } from '../oauth-client';
import { OAuthClientRequiredError } from '../oauth.errors';
import { insertFlow } from '../oauth.rows';
import { flowBinding, type FlowSecrets } from './flow-secrets';

export type BeginConnectionRequest = z.output<typeof OAuthCommands.begin.request>;
export type BeginConnectionResult = z.input<typeof OAuthCommands.begin.response>;

const FLOW_TTL_MS = 10 * 60_000;

export function stateHash(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('hex');
}

/**
 * Starts connecting an MCP server: its authorization server found, a client registered when the
 * definition names none, and the consent URL (PKCE S256, a random state) answered. Nothing is
 * stored as a credential until the authorization server sends the operator back with a code.
 */
@Injectable()
export class BeginConnection {
  private readonly oauth: OAuthClient;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(MASTER_KEY_RING) private readonly ring: MasterKeyRing,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {
    this.oauth = new OAuthClient({ allowPrivate: options.oauth.allowPrivate, timeoutMs: options.oauth.timeoutMs });
  }

  async execute(request: BeginConnectionRequest): Promise<BeginConnectionResult> {
    const server = await this.oauth.discover(request.resource);
    const scope = request.oauth.scopes.length > 0 ? request.oauth.scopes.join(' ') : server.resourceMetadata?.scopes_supported?.join(' ') || undefined;
    let client;
    let registered = false;
    if (request.oauth.clientId) client = { client_id: request.oauth.clientId, redirect_uris: [request.redirectUri] };
    else if (server.metadata.registration_endpoint) {
      client = await this.oauth.register(server, request.redirectUri, scope);
      registered = true;
    } else throw new OAuthClientRequiredError(server.issuer);
    const state = randomBytes(32).toString('base64url');
    const { authorizationUrl, codeVerifier } = await this.oauth.start(server, client, { redirectUri: request.redirectUri, scope, state });
    const hash = stateHash(state);
    const secrets: FlowSecrets = { codeVerifier, client, metadata: server.metadata, resourceIndicator: server.resourceIndicator };
    const plain = Buffer.from(JSON.stringify(secrets), 'utf8');
    const sealed = (() => {
      try {
        return encryptValue(plain, flowBinding(request.workspaceId, hash), this.ring);
      } finally {
        plain.fill(0);
      }
    })();
    const expiresAt = new Date(this.options.clock().getTime() + FLOW_TTL_MS);
    await insertFlow(
      this.pool,
      {
        state_hash: hash,
        workspace_id: request.workspaceId,
        credential: request.oauth.credential,
        resource: request.resource,
        issuer: server.issuer,
        redirect_uri: request.redirectUri,
        return_to: request.returnTo ?? null,
        actor: request.actor,
        expires_at: expiresAt,
      },
      sealed,
    );
    this.options.log('info', 'OAuth connection started', { workspaceId: request.workspaceId, credential: request.oauth.credential, issuer: server.issuer, registered });
    return { authorizationUrl: authorizationUrl.href, expiresAt: expiresAt.toISOString(), issuer: server.issuer, clientId: client.client_id, registered };
  }
}
