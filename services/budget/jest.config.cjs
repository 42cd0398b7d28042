const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'budget',
  rootDir: __dirname,
};
