import { Injectable, inject } from '@angular/core';
import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { ApiClient } from '../../core/api';

export interface Passkey {
  id: string;
  name: string;
  transports: string[];
  synced: boolean;
  backedUp: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  lastCounterRegressionAt: string | null;
}

/** The signed-in user's passkeys, and the confirmation that changes to them need. */
@Injectable({ providedIn: 'root' })
export class PasskeysApi {
  private readonly api = inject(ApiClient);

  async list(): Promise<Passkey[]> {
    return (await this.api.get<{ items: Passkey[] }>('/api/v1/auth/passkeys')).items;
  }

  /** Options, the browser's creation ceremony, then the server verifies and stores it. */
  async add(name: string): Promise<Passkey> {
    const optionsJSON = await this.api.post<PublicKeyCredentialCreationOptionsJSON>('/api/v1/auth/passkeys/registration/options');
    const response = await startRegistration({ optionsJSON });
    return this.api.post<Passkey>('/api/v1/auth/passkeys', { name, response });
  }

  rename(id: string, name: string): Promise<Passkey> {
    return this.api.request<Passkey>('PATCH', `/api/v1/auth/passkeys/${encodeURIComponent(id)}`, { body: { name } });
  }

  remove(id: string): Promise<void> {
    return this.api.delete(`/api/v1/auth/passkeys/${encodeURIComponent(id)}`);
  }

  async confirmWithPassword(password: string, code?: string): Promise<void> {
    await this.api.post('/api/v1/auth/reauthenticate', code ? { password, code } : { password });
  }
}
