import type { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureGatewayApp, PacketAdeGrpcHealth, packetAdeGrpcOptions, registerControlPlaneParsers, withFrameworkErrorAnswers } from '@packetagent/gateway';
import { AppModule, type Log } from './app.module';
import type { Env } from './env';

/**
 * The application as `main.ts` runs it and as integration tests start it in-process: one
 * construction path, so tests exercise exactly what ships.
 */
export async function createApp(env: Env, logger: LoggerService, log: Log): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(env, log),
    new FastifyAdapter(withFrameworkErrorAnswers({ bodyLimit: env.PACKETAGENT_HTTP_BODY_LIMIT_BYTES, trustProxy: env.PACKETAGENT_TRUST_PROXY })),
    // rawBody keeps the exact bytes of JSON bodies: webhook signatures are checked over them.
    { logger, rawBody: true, abortOnError: false },
  );
  registerControlPlaneParsers(app);
  await configureGatewayApp(app, { publicUrl: env.PACKETAGENT_PUBLIC_URL });
  if (env.PACKETAGENT_GRPC_ENABLED) {
    app.connectMicroservice(
      packetAdeGrpcOptions({
        host: env.PACKETAGENT_GRPC_HOST ?? env.PACKETAGENT_HOST,
        port: env.PACKETAGENT_GRPC_PORT,
        tlsCertFile: env.PACKETAGENT_GRPC_TLS_CERT_FILE,
        tlsKeyFile: env.PACKETAGENT_GRPC_TLS_KEY_FILE,
      }, () => app.get(PacketAdeGrpcHealth, { strict: false })),
    );
  }
  return app;
}

/** Starts what createApp built: the gRPC door (when enabled) and then HTTP. */
export async function listenApp(app: NestFastifyApplication, port: number, host: string): Promise<void> {
  await app.startAllMicroservices();
  await app.listen(port, host);
}
