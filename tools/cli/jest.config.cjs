const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'cli',
  rootDir: __dirname,
};
