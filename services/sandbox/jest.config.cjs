const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'sandbox',
  rootDir: __dirname,
};
