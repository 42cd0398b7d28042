import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServerCredentials, type Server } from '@grpc/grpc-js';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { Transport, type GrpcOptions } from '@nestjs/microservices';
import { MAX_PACKAGE_BYTES } from '@packetagent/contracts';
import type { PacketAdeGrpcHealth } from './grpc-health';

/**
 * Where the .proto files are: libs/contracts/proto, which the build (tools/dev/build.mjs) copies
 * to the same place under dist/, so the sources and the shipped app find them alike.
 */
export const PACKETADE_PROTO_DIR = join(__dirname, '../../../../../libs/contracts/proto');



export interface PacketAdeGrpcSettings {
  host: string;
  port: number;
  /** PEM files; both or neither. Without them the port speaks plaintext (for loopback or behind a TLS proxy). */
  tlsCertFile?: string;
  tlsKeyFile?: string;
}

/**
 * The gRPC transport of the PacketADE door, for `app.connectMicroservice`: the PacketAde
 * service, gRPC health (`health`, the app's PacketAdeGrpcHealth, looked up when the transport
 * starts) and server reflection, on its own port; large enough for a 1 MiB package and its envelope.
 */
export function packetAdeGrpcOptions(settings: PacketAdeGrpcSettings, health: () => PacketAdeGrpcHealth): GrpcOptions {
  return {
    transport: Transport.GRPC,
    options: {
      package: 'packetagent.v1',
      protoPath: 'packetagent/v1/packetade.proto',
      url: `${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${settings.port}`,
      credentials: credentialsOf(settings),
      maxReceiveMessageLength: 2 * MAX_PACKAGE_BYTES + 64 * 1024,
      loader: { includeDirs: [PACKETADE_PROTO_DIR], keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true },
      onLoadPackageDefinition: (definition, server) => {
        // Reflection describes health too, so `grpcurl list` and health checks need no .proto at hand.
        new ReflectionService({ ...definition, ...loadSync(healthProtoPath) }).addToServer(server as Server);
        health().addToServer(server as Server);
      },
    },
  };
}

function credentialsOf(settings: PacketAdeGrpcSettings): ServerCredentials {
  if (!settings.tlsCertFile && !settings.tlsKeyFile) return ServerCredentials.createInsecure();
  if (!settings.tlsCertFile || !settings.tlsKeyFile) throw new Error('gRPC TLS needs both a certificate and a key file');
  return ServerCredentials.createSsl(null, [{ cert_chain: readFileSync(settings.tlsCertFile), private_key: readFileSync(settings.tlsKeyFile) }], false);
}
