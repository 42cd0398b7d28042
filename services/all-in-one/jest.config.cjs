const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'all-in-one',
  rootDir: __dirname,
};
