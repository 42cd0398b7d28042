import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';
import { GATEWAY_REDIS, viaRedis } from '../identity/redis';
import { randomToken, sha256 } from '../identity/secrets';

const SessionRecordSchema = z.object({
  userId: z.uuid(),
  csrfToken: z.string().min(1),
  /** Password accepted, second factor still owed: the session grants nothing else yet. */
  pendingTotp: z.boolean(),
  createdAt: z.iso.datetime(),
  /** When the user last proved who they are in this session (sign-in or re-authentication). */
  authenticatedAt: z.iso.datetime().optional(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

export interface NewSession {
  sessionId: string;
  csrfToken: string;
  ttlSeconds: number;
}

/** A login waiting for its second factor expires quickly. */
const PENDING_TTL_SECONDS = 300;

/**
 * Sessions in Redis under a hash of the session id, so a copy of Redis holds nothing a
 * browser could present. The session id itself lives only in the cookie.
 */
@Injectable()
export class SessionStore {
  constructor(
    @Inject(GATEWAY_REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions,
  ) {}

  async create(userId: string, pendingTotp: boolean): Promise<NewSession> {
    const sessionId = randomToken(32);
    const csrfToken = randomToken(32);
    const ttlSeconds = pendingTotp ? Math.min(PENDING_TTL_SECONDS, this.options.sessionTtlSeconds) : this.options.sessionTtlSeconds;
    const now = new Date().toISOString();
    const record: SessionRecord = { userId, csrfToken, pendingTotp, createdAt: now, authenticatedAt: now };
    await viaRedis('the session store', () => this.redis.set(this.key(sessionId), JSON.stringify(record), 'EX', ttlSeconds));
    return { sessionId, csrfToken, ttlSeconds };
  }

  /** Records that the user proved who they are again just now; the session keeps its id and expiry. */
  async markAuthenticated(sessionId: string, record: SessionRecord, at: Date = new Date()): Promise<void> {
    const updated: SessionRecord = { ...record, authenticatedAt: at.toISOString() };
    // KEEPTTL: re-authenticating does not lengthen the session; XX: an ended session stays ended.
    await viaRedis('the session store', () => this.redis.set(this.key(sessionId), JSON.stringify(updated), 'KEEPTTL', 'XX'));
  }

  async get(sessionId: string): Promise<SessionRecord | null> {
    const raw = await viaRedis('the session store', () => this.redis.get(this.key(sessionId)));
    if (raw === null) return null;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      return null;
    }
    // A record this version cannot read (e.g. written by another version) is no session.
    const parsed = SessionRecordSchema.safeParse(value);
    return parsed.success ? parsed.data : null;
  }

  async delete(sessionId: string): Promise<void> {
    await viaRedis('the session store', () => this.redis.del(this.key(sessionId)));
  }

  /**
   * Ends `sessionId` and opens a full session for the same user under a new id: whoever
   * watched the pending session's id learns nothing usable.
   */
  async promote(sessionId: string, userId: string): Promise<NewSession> {
    await this.delete(sessionId);
    return this.create(userId, false);
  }

  private key(sessionId: string): string {
    return `${this.options.redisKeyPrefix}session:${sha256(sessionId).toString('hex')}`;
  }
}
