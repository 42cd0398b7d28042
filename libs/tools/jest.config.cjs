const preset = require('../../jest.preset.cjs');

// @octokit/rest and its dependencies ship only as ES modules; Jest's CommonJS runtime loads
// them once SWC has compiled them (Node itself loads them through require(esm)).
const ESM_PACKAGES = ['@octokit', 'universal-user-agent', 'before-after-hook', 'json-with-bigint', 'content-type'];
const tsTransform = preset.transform['^.+\\.ts$'];

module.exports = {
  ...preset,
  displayName: 'tools',
  rootDir: __dirname,
  transform: {
    ...preset.transform,
    [`/node_modules/(${ESM_PACKAGES.join('|')})/.+\\.js$`]: tsTransform,
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES.join('|')})/)`],
};
