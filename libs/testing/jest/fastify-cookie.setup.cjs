// Jest's module VM cannot run the dynamic import() with which @fastify/cookie loads the
// ESM-only `cookie` package (it would need --experimental-vm-modules). The very same plugin,
// loaded by Node's own loader outside the VM, can: nothing is replaced. Test projects that
// start the HTTP app list this file in `setupFilesAfterEnv`.
jest.mock('@fastify/cookie', () => {
  const nodeLoader = require('node:module');
  return nodeLoader._load(require.resolve('@fastify/cookie'), null, false);
});
