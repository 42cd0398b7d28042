import { credentials, loadPackageDefinition, Metadata, type ChannelCredentials, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { join } from 'node:path';
import * as protobuf from 'protobufjs';
import { PACKETADE_PROTO_DIR } from '@packetagent/gateway';

// A PacketADE client as PacketADE would build one: @grpc/grpc-js with the service loaded from
// the .proto in libs/contracts, and the rich error model read back from grpc-status-details-bin.

type Unary = (request: unknown, metadata: Metadata, callback: (error: ServiceError | null, response: unknown) => void) => void;

export interface PacketAdeGrpcClient {
  call<T = Record<string, unknown>>(method: string, request: Record<string, unknown>): Promise<T>;
  watch(cursor: string): ClientReadableStream<FeedEventMessage>;
  close(): void;
}

export interface FeedEventMessage {
  cursor: string;
  type: string;
  stream: string;
  dataJson: string;
}

export function packetAdeGrpcClient(address: string, token: string, channel: ChannelCredentials = credentials.createInsecure()): PacketAdeGrpcClient {
  const definition = loadSync('packetagent/v1/packetade.proto', { includeDirs: [PACKETADE_PROTO_DIR], longs: Number, enums: String, defaults: true });
  const loaded = loadPackageDefinition(definition) as unknown as { packetagent: { v1: { PacketAde: new (address: string, creds: ChannelCredentials) => Client } } };
  const client = new loaded.packetagent.v1.PacketAde(address, channel) as Client & Record<string, unknown>;
  const metadata = () => {
    const m = new Metadata();
    m.set('authorization', `Bearer ${token}`);
    return m;
  };
  return {
    call: <T>(method: string, request: Record<string, unknown>) =>
      new Promise<T>((resolve, reject) => {
        const unary = client[method] as Unary;
        unary.call(client, request, metadata(), (error, response) => (error ? reject(error) : resolve(response as T)));
      }),
    watch: (cursor) => (client['WatchEvents'] as (request: unknown, metadata: Metadata) => ClientReadableStream<FeedEventMessage>).call(client, { cursor }, metadata()),
    close: () => client.close(),
  };
}

export interface StatusDetails {
  code: number;
  reason: string | null;
  fieldViolations: Array<{ field: string; description: string }>;
}

/** google.rpc.Status from a failed call's trailers, with its ErrorInfo reason and BadRequest violations. */
export function statusDetails(error: ServiceError): StatusDetails {
  const root = protobuf.loadSync([join(PACKETADE_PROTO_DIR, 'google/rpc/status.proto'), join(PACKETADE_PROTO_DIR, 'google/rpc/error_details.proto')]);
  const bytes = error.metadata.get('grpc-status-details-bin')[0];
  if (!Buffer.isBuffer(bytes)) throw new Error(`no grpc-status-details-bin on ${error.code} ${error.details}`);
  const status = root.lookupType('google.rpc.Status').decode(bytes) as unknown as { code: number; details: Array<{ type_url: string; value: Uint8Array }> };
  let reason: string | null = null;
  const fieldViolations: StatusDetails['fieldViolations'] = [];
  for (const detail of status.details) {
    const name = detail.type_url.split('/').pop()!;
    const decoded = root.lookupType(name).decode(detail.value) as unknown as Record<string, unknown>;
    if (name === 'google.rpc.ErrorInfo') reason = decoded['reason'] as string;
    if (name === 'google.rpc.BadRequest') fieldViolations.push(...(decoded['fieldViolations'] as StatusDetails['fieldViolations']));
  }
  return { code: status.code, reason, fieldViolations };
}

/** The error a promise rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('expected the call to fail, and it succeeded');
}
