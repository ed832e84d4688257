// Which suites can change with the stores under them. CI runs every suite on the embedded stores (README's `npm test`)
// and again on PostgreSQL and Redis with TEST_SCOPE=stores, which leaves out the suites below: they start no system,
// open no database and reach no Redis, so a second pass on other stores would repeat them exactly.
// tests/suite-scopes.test.ts holds this list to what the suites import.
export const STORE_FREE_SUITES = [
  'batch-writer',
  'config',
  'deployment-files',
  'gateway-file',
  'k6-tools',
  'openapi',
  'pdp-client',
  'pdp-evaluate',
  'readme',
  'suite-scopes',
  'sweep-chart',
  'verify-token',
];

/** jest's testPathIgnorePatterns for a scope: `stores` leaves out the store-free suites; anything else runs all. */
export const ignoredSuites = (scope) =>
  scope === 'stores' ? STORE_FREE_SUITES.map((name) => `/tests/${name}\\.test\\.ts$`) : [];
