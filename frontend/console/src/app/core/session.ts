import { Injectable, computed, inject, signal } from '@angular/core';
import { ApiClient, ApiError } from './api';

export type Role = 'viewer' | 'member' | 'admin' | 'owner';

export interface Caller {
  kind: 'user' | 'api_key';
  id: string;
  email: string | null;
  totpEnabled: boolean | null;
  workspaces: Array<{ id: string; name: string; role: Role }>;
}

// ROLE_PERMISSIONS of libs/contracts roles.ts, for what the page offers; the server checks every call.
const PERMISSIONS: Record<Role, readonly string[]> = {
  viewer: ['inspect'],
  member: ['inspect', 'author', 'run-control'],
  admin: ['inspect', 'author', 'deploy', 'deployment-control', 'run-control', 'run-recovery', 'sandbox-exec', 'computer-manage', 'approve', 'admin'],
  owner: ['inspect', 'author', 'deploy', 'deployment-control', 'run-control', 'run-recovery', 'sandbox-exec', 'computer-manage', 'approve', 'admin'],
};

/** Who is signed in, and what they may do in the workspace on screen. */
@Injectable({ providedIn: 'root' })
export class Session {
  private readonly api = inject(ApiClient);
  readonly caller = signal<Caller | null>(null);
  readonly workspaceId = signal<string | null>(null);
  readonly workspace = computed(() => this.caller()?.workspaces.find((w) => w.id === this.workspaceId()) ?? null);
  private loaded: Promise<Caller | null> | null = null;

  /** The caller, asked once per page load; null when nobody is signed in. */
  load(force = false): Promise<Caller | null> {
    if (!this.loaded || force) {
      this.loaded = this.api.get<Caller>('/api/v1/auth/me').then(
        (caller) => {
          this.caller.set(caller);
          this.api.unauthenticated.set(false);
          return caller;
        },
        (error: unknown) => {
          if (error instanceof ApiError && error.problem.status === 401) {
            this.caller.set(null);
            return null;
          }
          this.loaded = null;
          throw error;
        },
      );
    }
    return this.loaded;
  }

  can(permission: string): boolean {
    const role = this.workspace()?.role;
    return role ? PERMISSIONS[role].includes(permission) : false;
  }

  async signIn(email: string, password: string): Promise<{ totpRequired: boolean }> {
    const answer = await this.api.post<{ csrfToken: string; totpRequired: boolean }>('/api/v1/auth/login', { email, password });
    this.api.setCsrfToken(answer.csrfToken);
    if (!answer.totpRequired) await this.load(true);
    return { totpRequired: answer.totpRequired };
  }

  async secondFactor(code: string): Promise<void> {
    const answer = await this.api.post<{ csrfToken: string }>('/api/v1/auth/totp', { code });
    this.api.setCsrfToken(answer.csrfToken);
    await this.load(true);
  }

  async signOut(): Promise<void> {
    try {
      await this.api.post('/api/v1/auth/logout');
    } finally {
      this.api.setCsrfToken(null);
      this.caller.set(null);
      this.loaded = Promise.resolve(null);
    }
  }
}
