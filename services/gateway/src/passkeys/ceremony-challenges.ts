import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';
import { GATEWAY_REDIS, viaRedis } from '../identity/redis';
import { sha256 } from '../identity/secrets';

/** How long the browser has between asking for options and answering them, in seconds. */
export const CEREMONY_TTL_SECONDS = 300;

const CeremonySchema = z.discriminatedUnion('purpose', [
  z.object({ purpose: z.literal('registration'), userId: z.uuid() }),
  /**
   * `userId` null: a discoverable sign-in, any user's passkey may answer. `email`: the address
   * the sign-in named, for the login throttle (an unknown one gets a `userId` matching no one).
   */
  z.object({ purpose: z.literal('authentication'), userId: z.uuid().nullable(), email: z.string().nullable() }),
]);
export type Ceremony = z.infer<typeof CeremonySchema>;

/**
 * The challenges handed out for WebAuthn ceremonies, in Redis with a short TTL. Taking one
 * deletes it (GETDEL), so each is answered at most once, on whichever replica the answer reaches.
 */
@Injectable()
export class CeremonyChallenges {
  constructor(
    @Inject(GATEWAY_REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions,
  ) {}

  async remember(challenge: string, ceremony: Ceremony): Promise<void> {
    await viaRedis('the session store', () => this.redis.set(this.key(challenge), JSON.stringify(ceremony), 'EX', CEREMONY_TTL_SECONDS));
  }

  /** The ceremony the challenge was issued for, now spent; null when unknown, used or expired. */
  async take(challenge: string): Promise<Ceremony | null> {
    const raw = await viaRedis('the session store', () => this.redis.getdel(this.key(challenge)));
    if (raw === null) return null;
    try {
      const parsed = CeremonySchema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  private key(challenge: string): string {
    return `${this.options.redisKeyPrefix}passkey-challenge:${sha256(challenge).toString('hex')}`;
  }
}

/** The challenge a browser answered, from its clientDataJSON; null when that is not readable. */
export function answeredChallenge(clientDataJSON: string): string | null {
  try {
    const clientData: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    const challenge = (clientData as { challenge?: unknown }).challenge;
    return typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 128 ? challenge : null;
  } catch {
    return null;
  }
}
