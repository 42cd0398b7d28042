import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@packetagent/contracts';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';

export class PasskeysUnavailableError extends DomainError {
  readonly code = 'passkeys_unavailable';
}

export interface RelyingPartyIdentity {
  /** The WebAuthn RP id: the public URL's host name; a passkey works only under it. */
  id: string;
  /** The one origin a ceremony may come from: the public URL's scheme, host and port. */
  origin: string;
  name: string;
}

const RP_NAME = 'PacketAgent';

/**
 * The relying party, from the gateway's public URL. Browsers bind a passkey to a host name
 * and refuse IP addresses as RP ids, so without a public URL that names a host there are no
 * passkeys (the other sign-in methods are unaffected).
 */
export function relyingPartyFor(publicUrl: string | undefined): RelyingPartyIdentity | string {
  if (!publicUrl) return 'passkeys need the public URL (PACKETAGENT_PUBLIC_URL) that people open the console at';
  const url = new URL(publicUrl);
  const host = url.hostname;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith('[')) {
    return `passkeys need a public URL with a host name, not an IP address (${host})`;
  }
  // Browsers offer WebAuthn only in secure contexts: https, or http on localhost.
  if (url.protocol !== 'https:' && host !== 'localhost' && !host.endsWith('.localhost')) {
    return 'passkeys need an https public URL (http only for localhost)';
  }
  return { id: host, origin: url.origin, name: RP_NAME };
}

@Injectable()
export class RelyingParty {
  private readonly identity: RelyingPartyIdentity | string;

  constructor(@Inject(GATEWAY_OPTIONS) options: ResolvedGatewayOptions) {
    this.identity = relyingPartyFor(options.publicUrl);
  }

  get(): RelyingPartyIdentity {
    if (typeof this.identity === 'string') throw new PasskeysUnavailableError(this.identity);
    return this.identity;
  }
}
