import type { AuthorizationServerMetadata, OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { RecordBinding } from '../../crypto/envelope-cipher';

/** What a pending flow keeps encrypted: the PKCE verifier and everything the code exchange needs. */
export interface FlowSecrets {
  codeVerifier: string;
  client: OAuthClientInformationFull;
  metadata: AuthorizationServerMetadata;
  resourceIndicator: string;
}

/** A flow's ciphertext is bound to its state's hash, so it decrypts for that flow alone. */
export function flowBinding(workspaceId: string, stateHash: string): RecordBinding {
  return { workspaceId, name: `oauth-flow:${stateHash}`, version: 1 };
}
