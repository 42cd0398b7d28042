import { Injectable } from '@nestjs/common';
import { SessionStore } from '../../session.store';

/** Ends the session: its id stops working at once, on every replica. */
@Injectable()
export class Logout {
  constructor(private readonly sessions: SessionStore) {}

  async execute(sessionId: string | null): Promise<void> {
    if (sessionId) await this.sessions.delete(sessionId);
  }
}
