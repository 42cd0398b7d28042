import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MasterKeyConfigurationError } from '../shared/errors';
import { loadMasterKeyRing, masterKeyId, weakness } from './master-key-ring';

const b64 = (bytes: Buffer) => bytes.toString('base64');

describe(loadMasterKeyRing.name, () => {
  let dataDir: string;
  let logged: string[];
  const log = (level: string, message: string) => void logged.push(`${level} ${message}`);

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pa-vault-keys-'));
    logged = [];
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('puts the first configured key first and keeps the others readable', () => {
    const [current, old] = [randomBytes(32), randomBytes(32)];
    const sut = loadMasterKeyRing({ mode: 'production', masterKeys: [`${b64(current)},${b64(old)}`] }, log);
    expect(sut.current.id).toBe(masterKeyId(current));
    expect(sut.ids()).toEqual([masterKeyId(current), masterKeyId(old)]);
    expect(sut.get(masterKeyId(old))?.key.equals(old)).toBe(true);
  });

  it('reads keys from a file, one per line', () => {
    const [current, old] = [randomBytes(32), randomBytes(32)];
    const file = join(dataDir, 'keys');
    writeFileSync(file, `${b64(current)}\n${b64(old)}\n`);
    expect(loadMasterKeyRing({ mode: 'production', masterKeyFile: file }, log).ids()).toEqual([masterKeyId(current), masterKeyId(old)]);
  });

  it('refuses to start in production without a key', () => {
    expect(() => loadMasterKeyRing({ mode: 'production', dataDir }, log)).toThrow(MasterKeyConfigurationError);
    expect(() => loadMasterKeyRing({ mode: 'production', dataDir }, log)).toThrow(/PACKETAGENT_MASTER_KEY/);
  });

  it('refuses a weak key without quoting it', () => {
    const cases: [Buffer, RegExp][] = [
      [randomBytes(16), /16 bytes, not 32/],
      [Buffer.alloc(32, 7), /every byte is the same/],
      [Buffer.from('abababababababababababababababab'), /too little entropy/],
      [Buffer.from(Array.from({ length: 32 }, (_, i) => i)), /counting sequence/],
    ];
    for (const [key, reason] of cases) {
      const attempt = () => loadMasterKeyRing({ mode: 'production', masterKeys: [b64(key)] }, log);
      expect(attempt).toThrow(reason);
      try {
        attempt();
      } catch (error) {
        expect((error as Error).message).not.toContain(b64(key));
      }
    }
    expect(() => loadMasterKeyRing({ mode: 'production', masterKeys: ['not base64!'] }, log)).toThrow('not base64');
  });

  it('generates a private key file in development, warns loudly, and reuses it', () => {
    const first = loadMasterKeyRing({ mode: 'development', dataDir }, log);
    const path = join(dataDir, 'master.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(logged.join('\n')).toMatch(/warn VAULT DEVELOPMENT MODE: generated a master key/);
    expect(logged.join('\n')).not.toContain(readFileSync(path, 'utf8').trim());
    const second = loadMasterKeyRing({ mode: 'development', dataDir }, log);
    expect(second.current.id).toBe(first.current.id);
  });

  it('finds no weakness in random keys', () => {
    for (let i = 0; i < 200; i++) expect(weakness(randomBytes(32))).toBeNull();
  });
});
