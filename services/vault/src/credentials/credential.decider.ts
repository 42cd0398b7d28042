import type { CredentialGrant, VaultEventData } from '@packetagent/contracts';
import { CredentialNotFoundError } from '../shared/errors';

/** A credential's lifecycle: versions only grow, so a ciphertext's binding is never reused. */
export type Credential =
  | { status: 'absent'; name: string; lastVersion: 0 }
  | { status: 'live' | 'deleted'; name: string; lastVersion: number };

export type CredentialCommand =
  | { kind: 'store'; keyId: string; oauth?: 'connected' | 'refreshed' }
  | { kind: 'refresh'; keyId: string }
  | { kind: 'delete' }
  | { kind: 'redeem'; grant: Pick<CredentialGrant, 'grantId' | 'runId' | 'tool'> };

export type CredentialEvent =
  | { type: 'credential.stored'; data: VaultEventData<'credential.stored'> }
  | { type: 'credential.deleted'; data: VaultEventData<'credential.deleted'> }
  | { type: 'credential.resolved'; data: VaultEventData<'credential.resolved'> };

export function initialCredential(name: string): Credential {
  return { status: 'absent', name, lastVersion: 0 };
}

export function decide(command: CredentialCommand, state: Credential): CredentialEvent[] {
  switch (command.kind) {
    case 'store':
      return [
        {
          type: 'credential.stored',
          data: { name: state.name, version: state.lastVersion + 1, keyId: command.keyId, ...(command.oauth ? { kind: 'oauth' as const, oauth: command.oauth } : {}) },
        },
      ];
    case 'delete':
      if (state.status !== 'live') throw new CredentialNotFoundError(state.name);
      return [{ type: 'credential.deleted', data: { name: state.name, version: state.lastVersion } }];
    case 'refresh':
      // Replaces the live version of a connection, so its name must still be live.
      if (state.status !== 'live') throw new CredentialNotFoundError(state.name);
      return [{ type: 'credential.stored', data: { name: state.name, version: state.lastVersion + 1, keyId: command.keyId, kind: 'oauth', oauth: 'refreshed' } }];
    case 'redeem':
      if (state.status !== 'live') throw new CredentialNotFoundError(state.name);
      return [{ type: 'credential.resolved', data: { name: state.name, version: state.lastVersion, grantId: command.grant.grantId, runId: command.grant.runId, tool: command.grant.tool } }];
    default: {
      const unknown: never = command;
      throw new Error(`unknown credential command ${JSON.stringify(unknown)}`);
    }
  }
}

export function evolve(state: Credential, event: CredentialEvent): Credential {
  switch (event.type) {
    case 'credential.stored':
      return { status: 'live', name: state.name, lastVersion: event.data.version };
    case 'credential.deleted':
      return { status: 'deleted', name: state.name, lastVersion: state.lastVersion };
    case 'credential.resolved':
      return state;
    default: {
      const unknown: never = event;
      throw new Error(`unknown credential event ${JSON.stringify(unknown)}`);
    }
  }
}
