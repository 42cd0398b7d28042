const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'policy',
  rootDir: __dirname,
};
