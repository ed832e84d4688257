// ESM-only dependencies (oidc-provider, jose, openid-client) need jest's native ESM mode:
// @swc/jest strips types, `--experimental-vm-modules` (see package.json) runs the modules. See docs/decisions.md.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, sourceMaps: 'inline' }],
  },
  testMatch: ['<rootDir>/tests/**/*.test.ts'],
  testTimeout: 60000,
  // Suites share one PostgreSQL server and one Redis; each suite builds its own database, so they may run in parallel.
  maxWorkers: 2,
  // The embedded runs' suites start from one migrated database built once (tests/support/database-template.ts).
  globalSetup: '<rootDir>/tests/support/database-setup.js',
  globalTeardown: '<rootDir>/tests/support/database-teardown.js',
  coverageProvider: 'v8',
};
