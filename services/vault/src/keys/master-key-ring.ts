import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MasterKeyConfigurationError } from '../shared/errors';
import type { VaultLog, VaultModuleOptions } from '../vault.options';

export const MASTER_KEY_BYTES = 32;
export const MASTER_KEY_RING = Symbol('MASTER_KEY_RING');

export interface MasterKey {
  id: string;
  key: Buffer;
}

/** A key id from the key itself: configuration lists keys only, and an id cannot be paired with the wrong key. */
export function masterKeyId(key: Buffer): string {
  return `mk-${createHash('sha256').update('packetagent/vault/master-key-id/v1').update(key).digest('hex').slice(0, 16)}`;
}

/** Why a 32-byte key looks chosen by hand or by a broken generator, or null when it does not. */
export function weakness(key: Buffer): string | null {
  if (key.length !== MASTER_KEY_BYTES) return `it is ${key.length} bytes, not ${MASTER_KEY_BYTES}`;
  const counts = new Map<number, number>();
  for (const byte of key) counts.set(byte, (counts.get(byte) ?? 0) + 1);
  if (counts.size === 1) return 'every byte is the same';
  // 32 random bytes hold about 30 distinct values (entropy near 4.9 bits a byte); fewer than
  // 16, or under 3.5 bits, happens by chance with negligible probability.
  let entropy = 0;
  for (const count of counts.values()) entropy -= (count / key.length) * Math.log2(count / key.length);
  if (counts.size < 16 || entropy < 3.5) return 'it has too little entropy';
  const step = (key[1]! - key[0]! + 256) % 256;
  if (key.every((byte, index) => index === 0 || (byte - key[index - 1]! + 256) % 256 === step)) return 'it is a counting sequence';
  return null;
}

/** The current master key (first) and every other key still readable during a rotation. */
export class MasterKeyRing {
  private readonly byId: Map<string, MasterKey>;

  constructor(readonly keys: readonly MasterKey[]) {
    if (keys.length === 0) throw new MasterKeyConfigurationError('no master key');
    this.byId = new Map(keys.map((key) => [key.id, key]));
  }

  get current(): MasterKey {
    return this.keys[0]!;
  }

  get(id: string): MasterKey | undefined {
    return this.byId.get(id);
  }

  ids(): string[] {
    return this.keys.map((key) => key.id);
  }
}

function decodeKeys(source: string, origin: string): Buffer[] {
  const parts = source.split(/[\s,]+/).filter(Boolean);
  return parts.map((part, index) => {
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(part)) throw new MasterKeyConfigurationError(`${origin}: key ${index + 1} is not base64`);
    return Buffer.from(part, 'base64');
  });
}

function fromKeys(keys: Buffer[], origin: string): MasterKeyRing {
  const seen = new Set<string>();
  const ring: MasterKey[] = [];
  keys.forEach((key, index) => {
    const problem = weakness(key);
    // Names the position and the reason, never the key.
    if (problem) throw new MasterKeyConfigurationError(`${origin}: master key ${index + 1} is refused: ${problem}`);
    const id = masterKeyId(key);
    if (!seen.has(id)) ring.push({ id, key });
    seen.add(id);
  });
  return new MasterKeyRing(ring);
}

function developmentKey(dataDir: string, log: VaultLog): Buffer {
  const path = join(dataDir, 'master.key');
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(MASTER_KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    log('warn', 'VAULT DEVELOPMENT MODE: generated a master key on local disk; credentials are only as safe as this file. Set PACKETAGENT_MASTER_KEY (or _FILE) and production mode for real use.', { path });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    log('warn', 'VAULT DEVELOPMENT MODE: using the generated master key on local disk; do not use this for real credentials.', { path });
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const [key] = decodeKeys(readFileSync(path, 'utf8'), path);
  if (!key) throw new MasterKeyConfigurationError(`${path} holds no key`);
  return key;
}

/**
 * The master keys from the options (keys first, then the file); in development without any,
 * the generated key under `dataDir`. Production refuses a missing or weak key: a vault that
 * starts with one would encrypt real credentials under it.
 */
export function loadMasterKeyRing(options: VaultModuleOptions, log: VaultLog): MasterKeyRing {
  const keys: Buffer[] = [];
  if (options.masterKeys?.length) keys.push(...options.masterKeys.flatMap((value) => decodeKeys(value, 'PACKETAGENT_MASTER_KEY')));
  if (options.masterKeyFile) {
    let text: string;
    try {
      text = readFileSync(options.masterKeyFile, 'utf8');
    } catch (error) {
      throw new MasterKeyConfigurationError(`cannot read the master key file ${options.masterKeyFile}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    keys.push(...decodeKeys(text, options.masterKeyFile));
  }
  if (keys.length) return fromKeys(keys, 'master key configuration');
  if (options.mode === 'production') {
    throw new MasterKeyConfigurationError('production mode needs a master key: set PACKETAGENT_MASTER_KEY or PACKETAGENT_MASTER_KEY_FILE (32 random bytes, base64)');
  }
  if (!options.dataDir) throw new MasterKeyConfigurationError('development mode without a master key needs a data directory to keep the generated one');
  return fromKeys([developmentKey(options.dataDir, log)], 'development master key');
}
