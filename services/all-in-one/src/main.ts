// Tracing starts before anything it instruments is loaded.
import { startTelemetry } from '@packetagent/telemetry';

const telemetry = startTelemetry({ serviceName: 'packetagent' });

import 'reflect-metadata';
import { ConsoleLogger, Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { migrateDatabase } from '@packetagent/eventstore';
import { createApp, listenApp } from './app.factory';
import { ConfigurationError, parseEnv } from './env';

async function bootstrap(): Promise<void> {
  const env = parseEnv();
  const logger = new ConsoleLogger('packetagent', { json: env.PACKETAGENT_LOG_FORMAT === 'json' });
  const log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => {
    const text = fields ? `${message} ${JSON.stringify(fields)}` : message;
    if (level === 'error') logger.error(text, undefined, 'services');
    else if (level === 'warn') logger.warn(text, 'services');
    else logger.log(text, 'services');
  };

  // Signals are handled from the first moment: a stop during start-up (migrations) exits
  // cleanly too. After start-up it drains consumers and the relay and closes connections.
  const started: { app?: NestFastifyApplication } = {};
  const stop = async (signal: NodeJS.Signals) => {
    logger.log(`${signal} received; shutting down`, 'lifecycle');
    let code = 0;
    try {
      await started.app?.close();
      await telemetry.shutdown();
    } catch (error) {
      logger.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`, undefined, 'lifecycle');
      code = 1;
    }
    process.exit(code);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  if (env.PACKETAGENT_MIGRATE_ON_START) {
    const applied = await migrateDatabase({ databaseUrl: env.PACKETAGENT_DATABASE_URL });
    logger.log(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database schema is up to date', 'migrations');
  }

  const app = await createApp(env, logger, log);
  started.app = app;
  await listenApp(app, env.PACKETAGENT_PORT, env.PACKETAGENT_HOST);
  logger.log(`listening on http://${env.PACKETAGENT_HOST}:${env.PACKETAGENT_PORT}`, 'http');
  if (env.PACKETAGENT_GRPC_ENABLED) {
    const tls = env.PACKETAGENT_GRPC_TLS_CERT_FILE ? 'TLS' : 'plaintext';
    logger.log(`PacketADE gRPC on ${env.PACKETAGENT_GRPC_HOST ?? env.PACKETAGENT_HOST}:${env.PACKETAGENT_GRPC_PORT} (${tls})`, 'grpc');
  }
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigurationError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    new Logger('packetagent').error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  process.exit(1);
});
