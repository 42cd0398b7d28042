const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'intake',
  rootDir: __dirname,
};
