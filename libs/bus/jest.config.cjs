const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'bus',
  rootDir: __dirname,
};
