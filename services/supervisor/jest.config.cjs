const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'supervisor',
  rootDir: __dirname,
};
