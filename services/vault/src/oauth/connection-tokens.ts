import { Inject, Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { oauthResourceKey, type VaultEventData } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { decryptValue, encryptValue } from '../crypto/envelope-cipher';
import { MASTER_KEY_RING, type MasterKeyRing } from '../keys/master-key-ring';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../vault.options';
import { decide } from '../credentials/credential.decider';
import { appendCredentialEvents, insertVersion, retireLiveVersion, type LiveCredentialRow } from '../credentials/credential.rows';
import { CredentialUndecryptableError } from '../shared/errors';
import { decideToken, factsOf, parseStoredConnection, refreshed, refreshFailure, type ConnectionFacts, type StoredConnection } from './connection';
import { OAuthClient } from './oauth-client';
import { OAuthAudienceMismatchError, OAuthReconnectRequiredError } from './oauth.errors';
import { markRefreshRefused } from './oauth.rows';

/** An access token handed out, or why none can be (committed with the refusal, then thrown). */
export type TokenAnswer = { ok: true; accessToken: Buffer; version: number; expiresAt: string | null } | { ok: false; error: OAuthReconnectRequiredError };

const VAULT_ACTOR = { kind: 'service', id: 'vault' } as const;

/**
 * Refreshes already made by earlier attempts of one transaction that was then retried (another
 * replica appended first). The authorization server may have rotated the refresh token, so
 * the attempt after must store these tokens rather than refresh again with the old one.
 */
export class RefreshCarry {
  private readonly made = new Map<number, StoredConnection>();

  get(version: number): StoredConnection | undefined {
    return this.made.get(version);
  }

  set(version: number, connection: StoredConnection): void {
    this.made.set(version, connection);
  }
}

/**
 * The access token of an OAuth connection, for the resource it was made for. Called under the
 * credential's lock, inside the caller's transaction, so concurrent callers on every replica take
 * turns: the first refreshes (the authorization server may rotate the refresh token, so two
 * refreshes with one token would fail the second), the others find the new version.
 */
@Injectable()
export class ConnectionTokens {
  private readonly oauth: OAuthClient;

  constructor(
    private readonly store: PostgresEventStore,
    @Inject(MASTER_KEY_RING) private readonly ring: MasterKeyRing,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {
    this.oauth = new OAuthClient({ allowPrivate: options.oauth.allowPrivate, timeoutMs: options.oauth.timeoutMs });
  }

  async accessToken(client: PoolClient, row: LiveCredentialRow, audience: string | undefined, currentVersion: number, carry: RefreshCarry): Promise<TokenAnswer> {
    const binding = { workspaceId: row.workspace_id, name: row.name, version: row.version };
    const plain = decryptValue({ ciphertext: row.ciphertext, iv: row.iv, tag: row.tag, wrappedKey: row.wrapped_key, keyId: row.key_id }, binding, this.ring);
    const connection = parseStoredConnection(plain);
    plain.fill(0);
    if (!connection) throw new CredentialUndecryptableError(row.name, 'value');
    if (!audience || oauthResourceKey(audience) !== oauthResourceKey(connection.resource)) throw new OAuthAudienceMismatchError(row.name, connection.resource, audience);
    const now = this.options.clock();
    const decision = decideToken(connection, row.refresh_error ? { reason: row.refresh_error } : null, now, this.options.oauth.refreshMarginMs);
    switch (decision.kind) {
      case 'use':
        return { ok: true, accessToken: Buffer.from(connection.tokens.access_token, 'utf8'), version: row.version, expiresAt: connection.expiresAt };
      case 'reconnect':
        if (!row.refresh_error) await markRefreshRefused(client, binding, decision.reason);
        return { ok: false, error: new OAuthReconnectRequiredError(row.name, decision.reason) };
      case 'refresh':
        return this.refresh(client, row, connection, decision.expired, currentVersion, carry);
    }
  }

  private async refresh(client: PoolClient, row: LiveCredentialRow, connection: StoredConnection, expired: boolean, currentVersion: number, carry: RefreshCarry): Promise<TokenAnswer> {
    const binding = { workspaceId: row.workspace_id, name: row.name, version: row.version };
    let next: StoredConnection;
    try {
      next = carry.get(row.version) ?? refreshed(connection, await this.oauth.refresh(connection, connection.tokens.refresh_token!), this.options.clock());
      carry.set(row.version, next);
    } catch (error) {
      const failure = refreshFailure(error);
      this.options.log('warn', 'OAuth refresh failed', { workspaceId: row.workspace_id, name: row.name, permanent: failure.permanent, reason: failure.reason });
      if (failure.permanent) {
        await markRefreshRefused(client, binding, failure.reason);
        return { ok: false, error: new OAuthReconnectRequiredError(row.name, failure.reason) };
      }
      // Not the server's refusal: the token still in hand serves until it expires.
      if (!expired) return { ok: true, accessToken: Buffer.from(connection.tokens.access_token, 'utf8'), version: row.version, expiresAt: connection.expiresAt };
      return { ok: false, error: new OAuthReconnectRequiredError(row.name, failure.reason) };
    }
    const events = decide({ kind: 'refresh', keyId: this.ring.current.id }, { status: 'live', name: row.name, lastVersion: currentVersion });
    const { version } = events[0]!.data as VaultEventData<'credential.stored'>;
    const previous = row.oauth as unknown as ConnectionFacts;
    const facts = factsOf(next, { at: previous.connectedAt, by: previous.connectedBy }, next.obtainedAt);
    const value = Buffer.from(JSON.stringify(next), 'utf8');
    const record = (() => {
      try {
        return encryptValue(value, { workspaceId: row.workspace_id, name: row.name, version }, this.ring);
      } finally {
        value.fill(0);
      }
    })();
    await retireLiveVersion(client, row.workspace_id, row.name);
    await insertVersion(client, { workspaceId: row.workspace_id, name: row.name, version }, record, VAULT_ACTOR, facts);
    await appendCredentialEvents(this.store, client, row.workspace_id, row.name, events, VAULT_ACTOR, { keepTransaction: true });
    this.options.log('info', 'OAuth tokens refreshed', { workspaceId: row.workspace_id, name: row.name, version, expiresAt: next.expiresAt });
    return { ok: true, accessToken: Buffer.from(next.tokens.access_token, 'utf8'), version, expiresAt: next.expiresAt };
  }
}
