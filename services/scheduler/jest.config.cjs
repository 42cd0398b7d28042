const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'scheduler',
  rootDir: __dirname,
};
