/** Where tests find Postgres, NATS and Redis: the environment, or the local defaults. */
export const testEnv = {
  databaseUrl: process.env['PACKETAGENT_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  natsUrl: process.env['PACKETAGENT_TEST_NATS_URL'] ?? 'nats://127.0.0.1:4222',
  redisUrl: process.env['PACKETAGENT_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
};

export function databaseUrlFor(baseUrl: string, database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
