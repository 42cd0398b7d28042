import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, status as GrpcStatus } from '@grpc/grpc-js';
import { startTestApp, type TestApp } from './testing/app.testkit';
import { packetAdeGrpcClient, rejection } from './testing/packetade.testkit';

/** A self-signed certificate for 127.0.0.1, made with the system's openssl. */
function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

describe('PacketADE gRPC over TLS', () => {
  let sut: TestApp;
  let dir: string;
  let cert: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pa-grpc-tls-'));
    const files = selfSignedCertificate(dir);
    cert = files.cert;
    sut = await startTestApp({ PACKETAGENT_GRPC_TLS_CERT_FILE: files.cert, PACKETAGENT_GRPC_TLS_KEY_FILE: files.key });
  });
  afterAll(async () => {
    await sut?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the door over TLS with the configured certificate, and refuses a plaintext client', async () => {
    const secure = packetAdeGrpcClient(sut.grpcAddress, 'pade_00000000000000000000_0000000000000000000000000000000000000000000', credentials.createSsl(readFileSync(cert)));
    const plain = packetAdeGrpcClient(sut.grpcAddress, 'pade_00000000000000000000_0000000000000000000000000000000000000000000');
    try {
      // Over TLS the call reaches the door, which refuses the unknown token.
      const refused = await rejection(secure.call('GetAcknowledged', {}));
      expect(refused.code).toBe(GrpcStatus.UNAUTHENTICATED);
      const unreachable = await rejection(plain.call('GetAcknowledged', {}));
      expect(unreachable.code).toBe(GrpcStatus.UNAVAILABLE);
    } finally {
      secure.close();
      plain.close();
    }
  });
});
