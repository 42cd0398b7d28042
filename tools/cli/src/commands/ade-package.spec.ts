import { generateKeyPairSync } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli } from '../cli';
import { ExitCode } from '../errors';

const EXAMPLE = resolve(__dirname, '../../../../examples/release-audit.worker.yaml');
const COMMIT = '0123456789abcdef0123456789abcdef01234567';

describe('packetagent ade package | sign | verify', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pa-ade-'));
    copyFileSync(EXAMPLE, join(dir, 'release-audit.worker.yaml'));
    for (const name of ['publisher', 'stranger']) {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      writeFileSync(join(dir, `${name}.key`), privateKey.export({ type: 'pkcs8', format: 'pem' }));
      writeFileSync(join(dir, `${name}.pub`), publicKey.export({ type: 'spki', format: 'pem' }));
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // No API URL, key or workspace: these commands work without a server.
  async function sut(argv: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), env: {}, cwd: dir, readStdin: () => Promise.resolve(stdin) });
    return { code, stdout, stderr };
  }

  const read = (name: string) => readFileSync(join(dir, name), 'utf8');

  it('packages a definition with its provenance and derived requirements, signs it, and verifies it against the trusted key', async () => {
    const packaged = await sut(['ade', 'package', '-f', 'release-audit.worker.yaml', '--repository', 'https://git.example.com/ops/workers.git', '--commit', COMMIT, '-o', 'pkg.json']);
    const signed = await sut(['ade', 'sign', '-f', 'pkg.json', '--key', 'publisher.key', '-o', 'pkg.dsse.json']);
    const verified = await sut(['--json', 'ade', 'verify', '-f', 'pkg.dsse.json', '--trust', 'publisher.pub']);

    expect([packaged.code, signed.code, verified.code]).toEqual([ExitCode.ok, ExitCode.ok, ExitCode.ok]);
    const pkg = JSON.parse(read('pkg.json')) as { provenance: { source: unknown }; requires: { credentials: string[]; tools: string[] } };
    expect(pkg).toMatchObject({ apiVersion: 'packetagent/v1', kind: 'WorkerPackage' });
    expect(pkg.provenance.source).toEqual({ repository: 'https://git.example.com/ops/workers.git', commit: COMMIT, path: 'release-audit.worker.yaml' });
    expect(pkg.requires.credentials).toContain('slack_release_channel');
    expect(pkg.requires.tools).toEqual(expect.arrayContaining(['http_fetch', 'slack_post']));
    const digest = /package digest ([0-9a-f]{64})/.exec(packaged.stdout)![1];
    const report = JSON.parse(verified.stdout) as { digest: string; signatures: { keyId: string; trusted: boolean }[] };
    expect(report.digest).toBe(digest);
    expect(report.signatures).toEqual([{ keyId: expect.stringMatching(/^SHA256:[0-9a-f]{64}$/), trusted: true }]);
  });

  it('prints the package on standard output when no output file is named, from a definition on standard input', async () => {
    const packaged = await sut(['ade', 'package', '-f', '-', '--repository', 'r', '--commit', COMMIT, '--path', 'workers/audit.yaml'], readFileSync(EXAMPLE, 'utf8'));

    expect(packaged.code).toBe(ExitCode.ok);
    expect(JSON.parse(packaged.stdout)).toMatchObject({ provenance: { source: { path: 'workers/audit.yaml' } } });
  });

  it('says a signature by a key that is not trusted is valid but untrusted', async () => {
    await sut(['ade', 'package', '-f', 'release-audit.worker.yaml', '--repository', 'r', '--commit', COMMIT, '-o', 'stranger-pkg.json']);
    await sut(['ade', 'sign', '-f', 'stranger-pkg.json', '--key', 'stranger.key', '-o', 'stranger.dsse.json']);

    const verified = await sut(['ade', 'verify', '-f', 'stranger.dsse.json', '--trust', 'publisher.pub']);

    expect(verified.code).toBe(ExitCode.ok);
    expect(verified.stdout).toMatch(/signed by SHA256:[0-9a-f]{64} \(valid, but not a key you trust\)/);
  });

  it('refuses an envelope whose payload was edited after signing', async () => {
    await sut(['ade', 'package', '-f', 'release-audit.worker.yaml', '--repository', 'r', '--commit', COMMIT, '-o', 'edited-pkg.json']);
    await sut(['ade', 'sign', '-f', 'edited-pkg.json', '--key', 'publisher.key', '-o', 'edited.dsse.json']);
    const envelope = JSON.parse(read('edited.dsse.json')) as { payload: string };
    const payload = Buffer.from(envelope.payload, 'base64').toString('utf8').replace('"perRunUsd":0.5', '"perRunUsd":50');
    writeFileSync(join(dir, 'edited.dsse.json'), JSON.stringify({ ...envelope, payload: Buffer.from(payload).toString('base64') }));

    const verified = await sut(['ade', 'verify', '-f', 'edited.dsse.json', '--trust', 'publisher.pub']);

    expect(verified.code).toBe(ExitCode.failure);
    expect(verified.stderr).toMatch(/signature_invalid/);
  });

  it('refuses to package an invalid definition, naming the path, and writes nothing', async () => {
    writeFileSync(join(dir, 'broken.yaml'), read('release-audit.worker.yaml').replace('name: release-audit', 'name: Release Audit'));

    const packaged = await sut(['ade', 'package', '-f', 'broken.yaml', '--repository', 'r', '--commit', COMMIT, '-o', 'broken-pkg.json']);

    expect(packaged.code).toBe(ExitCode.failure);
    expect(packaged.stderr).toMatch(/worker\.name/);
    expect(() => read('broken-pkg.json')).toThrow(/ENOENT/);
  });

  it('refuses a commit that is not a commit id and a key that is not an Ed25519 private key', async () => {
    const badCommit = await sut(['ade', 'package', '-f', 'release-audit.worker.yaml', '--repository', 'r', '--commit', 'main']);
    await sut(['ade', 'package', '-f', 'release-audit.worker.yaml', '--repository', 'r', '--commit', COMMIT, '-o', 'k-pkg.json']);
    const badKey = await sut(['ade', 'sign', '-f', 'k-pkg.json', '--key', 'publisher.pub']);

    expect(badCommit.code).toBe(ExitCode.failure);
    expect(badCommit.stderr).toMatch(/provenance\.source\.commit/);
    expect(badKey.code).toBe(ExitCode.failure);
    expect(badKey.stderr).toMatch(/signature_key_unsupported/);
  });
});
