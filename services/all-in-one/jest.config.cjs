const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'all-in-one',
  rootDir: __dirname,
  setupFilesAfterEnv: [require.resolve('../../libs/testing/jest/fastify-cookie.setup.cjs')],
};
