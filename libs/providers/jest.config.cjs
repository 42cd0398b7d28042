const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'providers',
  rootDir: __dirname,
};
