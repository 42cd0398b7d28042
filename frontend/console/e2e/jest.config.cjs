// The console in Chromium against the whole app in-process (real Postgres, NATS, Redis, the
// supervisor with the scripted provider). Needs the console built: `npx nx run console:build`.
const preset = require('../../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'console-e2e',
  rootDir: __dirname,
  testMatch: ['**/*.e2e.spec.ts'],
  setupFilesAfterEnv: [require.resolve('../../../libs/testing/jest/fastify-cookie.setup.cjs')],
  testTimeout: 180_000,
};
