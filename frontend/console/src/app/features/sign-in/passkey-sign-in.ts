import { Injectable, inject } from '@angular/core';
import { browserSupportsWebAuthn, startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { ApiClient } from '../../core/api';
import { Session } from '../../core/session';

/** Signing in with a passkey: options from the server, the browser's ceremony, the session. */
@Injectable({ providedIn: 'root' })
export class PasskeySignIn {
  private readonly api = inject(ApiClient);
  private readonly session = inject(Session);

  readonly supported = browserSupportsWebAuthn();

  /** Without an address the browser offers the passkeys it holds for this site. */
  async signIn(email?: string): Promise<void> {
    const optionsJSON = await this.api.post<PublicKeyCredentialRequestOptionsJSON>('/api/v1/auth/login/passkey/options', email ? { email } : {});
    const response = await startAuthentication({ optionsJSON });
    const answer = await this.api.post<{ csrfToken: string }>('/api/v1/auth/login/passkey', { response });
    this.api.setCsrfToken(answer.csrfToken);
    await this.session.load(true);
  }
}
