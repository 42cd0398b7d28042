import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import type { OAuthCommands } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { decryptValue, encryptValue } from '../../crypto/envelope-cipher';
import { MASTER_KEY_RING, type MasterKeyRing } from '../../keys/master-key-ring';
import { retryOnConflict } from '../../shared/retry';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../../vault.options';
import { decide } from '../../credentials/credential.decider';
import { appendCredentialEvents, insertVersion, loadCredential, lockCredential, retireLiveVersion } from '../../credentials/credential.rows';
import { connectionOf, connectionView, factsOf } from '../connection';
import { OAuthClient } from '../oauth-client';
import { OAuthAuthorizationDeniedError, OAuthExchangeFailedError, OAuthFlowUnknownError } from '../oauth.errors';
import { takeFlow } from '../oauth.rows';
import { stateHash } from './begin-connection';
import { flowBinding, type FlowSecrets } from './flow-secrets';

export type CompleteConnectionRequest = z.output<typeof OAuthCommands.complete.request>;
export type CompleteConnectionResult = z.input<typeof OAuthCommands.complete.response>;

/**
 * The operator came back from consenting: the flow is taken (a state works once), the code is
 * exchanged with its PKCE verifier, and the tokens become a new version of the credential, of
 * kind `oauth`, stored by the operator who started the flow. A connection that needed an
 * operator is usable again from here on.
 */
@Injectable()
export class CompleteConnection {
  private readonly oauth: OAuthClient;

  constructor(
    private readonly store: PostgresEventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(MASTER_KEY_RING) private readonly ring: MasterKeyRing,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {
    this.oauth = new OAuthClient({ allowPrivate: options.oauth.allowPrivate, timeoutMs: options.oauth.timeoutMs });
  }

  async execute(request: CompleteConnectionRequest): Promise<CompleteConnectionResult> {
    const hash = stateHash(request.state);
    const flow = await takeFlow(this.pool, hash);
    if (!flow || flow.expires_at.getTime() <= this.options.clock().getTime()) throw new OAuthFlowUnknownError();
    if (request.error) {
      const description = request.errorDescription ? `: ${request.errorDescription}` : '';
      throw new OAuthAuthorizationDeniedError(`the authorization server did not authorize ${flow.credential} (${request.error}${description})`);
    }
    if (!request.code) throw new OAuthAuthorizationDeniedError(`the authorization server sent back neither a code nor an error for ${flow.credential}`);
    const plain = decryptValue({ ciphertext: flow.ciphertext, iv: flow.iv, tag: flow.tag, wrappedKey: flow.wrapped_key, keyId: flow.key_id }, flowBinding(flow.workspace_id, hash), this.ring);
    const secrets = JSON.parse(plain.toString('utf8')) as FlowSecrets;
    plain.fill(0);
    let tokens;
    try {
      tokens = await this.oauth.exchange({ issuer: flow.issuer, metadata: secrets.metadata, client: secrets.client, resourceIndicator: secrets.resourceIndicator, redirectUri: flow.redirect_uri }, request.code, secrets.codeVerifier);
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      throw new OAuthExchangeFailedError(`the authorization server ${flow.issuer} did not exchange the code for ${flow.credential}: ${reason}`, { cause: error });
    }
    const now = this.options.clock();
    const connection = connectionOf(tokens, { resource: flow.resource, resourceIndicator: secrets.resourceIndicator, issuer: flow.issuer, metadata: secrets.metadata, client: secrets.client }, now);
    const facts = factsOf(connection, { at: now.toISOString(), by: flow.actor }, null);
    const { workspace_id: workspaceId, credential: name } = flow;
    const version = await retryOnConflict(() =>
      this.store.transaction(async (client) => {
        await lockCredential(client, workspaceId, name);
        const events = decide({ kind: 'store', keyId: this.ring.current.id, oauth: 'connected' }, await loadCredential(client, workspaceId, name));
        const { version: next } = events[0]!.data as { version: number };
        const value = Buffer.from(JSON.stringify(connection), 'utf8');
        const record = (() => {
          try {
            return encryptValue(value, { workspaceId, name, version: next }, this.ring);
          } finally {
            value.fill(0);
          }
        })();
        await retireLiveVersion(client, workspaceId, name);
        await insertVersion(client, { workspaceId, name, version: next }, record, flow.actor, facts);
        await appendCredentialEvents(this.store, client, workspaceId, name, events, flow.actor);
        return next;
      }),
    );
    this.options.log('info', 'OAuth connection made', { workspaceId, name, version, issuer: flow.issuer, expiresAt: connection.expiresAt });
    return { workspaceId, connection: connectionView({ name, version, facts, refreshError: null }), returnTo: flow.return_to };
  }
}
