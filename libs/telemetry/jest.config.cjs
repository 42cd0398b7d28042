const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'telemetry',
  rootDir: __dirname,
};
