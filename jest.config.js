// ESM-only dependencies (oidc-provider, jose, openid-client) need jest's native ESM mode:
// @swc/jest strips types, `--experimental-vm-modules` (see package.json) runs the modules. See docs/decisions.md.
import { ignoredSuites } from './tests/support/suite-scopes.js';

/** Product code, the code coverage is measured on (`npm run coverage`): not the tests, the bench or the k6 scripts. */
const PRODUCT = ['wire', 'common', 'issuer', 'policies', 'gateway', 'backend', 'infra'];

export default {
  // jest's Node environment, with one connection to the run's browser per worker (tests/support/browser.ts).
  testEnvironment: '<rootDir>/tests/support/worker-browser-environment.js',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, sourceMaps: 'inline' }],
  },
  // A suite is tests/<name>.test.ts; a group suite imports its topics from tests/<name>/ (docs/development.md).
  testMatch: ['<rootDir>/tests/*.test.ts'],
  // TEST_SCOPE=stores: only the suites whose outcome can depend on the stores (tests/support/suite-scopes.js).
  // Heaviest suites first, so that the two workers end together (tests/support/suite-order.js).
  testSequencer: '<rootDir>/tests/support/suite-order.js',
  testPathIgnorePatterns: ['/node_modules/', ...ignoredSuites(process.env.TEST_SCOPE)],
  testTimeout: 60000,
  // Suites share one PostgreSQL server and one Redis; each suite builds its own database, so they may run in parallel.
  // TEST_WORKERS overrides the number for a measurement (docs/performance.md, "The test suite's time").
  maxWorkers: Number(process.env.TEST_WORKERS ?? 2),
  // The embedded runs' suites start from one migrated database built once (tests/support/database-template.ts), and
  // every suite's browser is a connection to one Chromium started for the run (tests/support/chromium.js).
  globalSetup: '<rootDir>/tests/support/global-setup.js',
  globalTeardown: '<rootDir>/tests/support/global-teardown.js',
  reporters: ['default', '<rootDir>/tests/support/slowest-suites-reporter.js'],
  coverageProvider: 'v8',
  collectCoverageFrom: [...PRODUCT.map((folder) => `<rootDir>/${folder}/**/*.ts`), '!<rootDir>/infra/k6/**'],
  coverageReporters: ['json-summary', 'text-summary'],
};
