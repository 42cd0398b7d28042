const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'vault',
  rootDir: __dirname,
};
