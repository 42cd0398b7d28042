const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'projections',
  rootDir: __dirname,
};
