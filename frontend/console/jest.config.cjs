// Unit tests of the console's pure code (formatting, diffs, timeline, problem parsing): no
// browser, no Angular. The browser suite is e2e/jest.config.cjs.
module.exports = {
  displayName: 'console',
  rootDir: __dirname,
  testEnvironment: 'node',
  roots: ['<rootDir>/src'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: ['**/*.spec.ts'],
};
