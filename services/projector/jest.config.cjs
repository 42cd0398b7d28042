const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  displayName: 'projector',
  rootDir: __dirname,
};
