import { connect, type NatsConnection } from '@nats-io/transport-node';

export interface NatsSettings {
  /** Comma-separated server URLs, e.g. nats://127.0.0.1:4222. */
  url: string;
  name: string;
}

/** Connects with unlimited reconnects: a NATS restart is an outage to wait out, not a crash. */
export function connectNats(settings: NatsSettings): Promise<NatsConnection> {
  return connect({
    servers: settings.url.split(',').map((server) => server.trim()),
    name: settings.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
}
