import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';

export interface TestCertificate {
  /** PEM of the certificate, for a server's `cert`. */
  cert: string;
  /** PEM of its private key, for a server's `key`. */
  key: string;
}

export interface TestCertificateAuthority {
  /** PEM of the CA certificate: what a client is told to trust. */
  ca: string;
  /** A server certificate the CA signed, valid for `names`. */
  server: TestCertificate;
  names: readonly string[];
}

function openssl(cwd: string, args: readonly string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A private CA of the test's own and one server certificate it signed (P-256, valid for a day),
 * made with the system's openssl. `names` are host names or IP addresses, the first one is the
 * certificate's common name. Nothing trusts the CA unless told to, which is what the tests need.
 */
export function testCertificateAuthority(names: readonly string[] = ['mail.test', 'localhost', '127.0.0.1']): TestCertificateAuthority {
  const dir = mkdtempSync(join(tmpdir(), 'packetagent-ca-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl(dir, ['req', '-x509', ...ec, '-days', '1', '-subj', '/CN=PacketAgent Test CA', '-keyout', 'ca.key', '-out', 'ca.crt',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    openssl(dir, ['req', ...ec, '-subj', `/CN=${names[0] ?? 'localhost'}`, '-keyout', 'server.key', '-out', 'server.csr']);
    const altNames = names.map((name) => (isIP(name) ? `IP:${name}` : `DNS:${name}`)).join(',');
    writeFileSync(join(dir, 'server.ext'), [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=${altNames}`,
      '',
    ].join('\n'));
    openssl(dir, ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-extfile', 'server.ext', '-out', 'server.crt']);
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    return { ca: read('ca.crt'), server: { cert: read('server.crt'), key: read('server.key') }, names };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
