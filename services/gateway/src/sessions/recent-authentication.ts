import { Injectable } from '@nestjs/common';
import { ReauthenticationRequiredError, UnauthenticatedError } from '../identity/errors';
import { SessionStore, type SessionRecord } from './session.store';

/** How long after signing in (or confirming it again) a session may change how the account signs in. */
export const RECENT_AUTHENTICATION_SECONDS = 600;

export function authenticatedRecently(session: SessionRecord, now: Date = new Date()): boolean {
  const at = Date.parse(session.authenticatedAt ?? session.createdAt);
  return Number.isFinite(at) && now.getTime() - at <= RECENT_AUTHENTICATION_SECONDS * 1000;
}

/**
 * Guards the changes to an account's sign-in methods (adding or removing a passkey): a session
 * left open on a shared screen must not be enough to add a way in.
 */
@Injectable()
export class RecentAuthentication {
  constructor(private readonly sessions: SessionStore) {}

  async assert(sessionId: string | null, userId: string): Promise<void> {
    const session = sessionId ? await this.sessions.get(sessionId) : null;
    if (!session || session.userId !== userId) throw new UnauthenticatedError('the session has ended; sign in again');
    if (!authenticatedRecently(session)) throw new ReauthenticationRequiredError();
  }
}
