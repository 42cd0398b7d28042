import { createHash } from 'node:crypto';

/** `SHA256:<unpadded base64>` of a host key blob: the form `ssh-keygen -lf` and OpenSSH's prompts print. */
export function hostKeyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named at the start of an SSH public key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`...). */
export function hostKeyType(keyBlob: Buffer): string {
  if (keyBlob.length < 4) return 'unknown';
  const length = keyBlob.readUInt32BE(0);
  return length > 0 && length < 64 && keyBlob.length >= 4 + length ? keyBlob.subarray(4, 4 + length).toString('latin1') : 'unknown';
}
