import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The key that signs remote-control links: the configured one; else one derived (HKDF, a label
 * of its own) from the grant-signing seed every replica already shares; else, for a single
 * process, one made once in the data directory (mode 0600) so links sent before a restart still
 * work after it.
 */
export function callbackSigningKey(configured: string | undefined, grantSigningSeed: string | undefined, dataDir: string): Buffer {
  if (configured !== undefined) {
    const key = Buffer.from(configured, 'base64');
    if (key.length < 32) throw new Error('PACKETAGENT_CALLBACK_SIGNING_KEY must be at least 32 bytes, base64');
    return key;
  }
  if (grantSigningSeed !== undefined) {
    return Buffer.from(hkdfSync('sha256', Buffer.from(grantSigningSeed, 'base64'), Buffer.alloc(0), 'packetagent remote-control links v1', 32));
  }
  const file = join(dataDir, 'callback-signing.key');
  try {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length >= 32) return key;
    throw new Error(`${file} holds less than 32 bytes`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    // Another process of the same data directory made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    throw error;
  }
}
