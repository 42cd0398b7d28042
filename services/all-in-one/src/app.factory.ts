import type { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureGatewayApp, registerControlPlaneParsers } from '@packetagent/gateway';
import { AppModule, type Log } from './app.module';
import type { Env } from './env';

/**
 * The application as `main.ts` runs it and as integration tests start it in-process: one
 * construction path, so tests exercise exactly what ships.
 */
export async function createApp(env: Env, logger: LoggerService, log: Log): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(env, log),
    new FastifyAdapter({ bodyLimit: env.PACKETAGENT_HTTP_BODY_LIMIT_BYTES, trustProxy: env.PACKETAGENT_TRUST_PROXY }),
    // rawBody keeps the exact bytes of JSON bodies: webhook signatures are checked over them.
    { logger, rawBody: true, abortOnError: false },
  );
  registerControlPlaneParsers(app);
  await configureGatewayApp(app, { publicUrl: env.PACKETAGENT_PUBLIC_URL });
  return app;
}
