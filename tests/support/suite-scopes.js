// Which suites run where (TEST_SCOPE; jest.config.js reads it):
//   unset    README's `npm test`: every suite but the long ones below, on whatever stores the environment names.
//   long     only the long suites: each starts the services as separate processes (or several systems one after
//            another) to kill, stop, restart or trace them, and checks what a process does at its edges rather than a
//            rule of the contract another suite does not also hold. CI runs them on both stores; a contributor runs
//            them with `TEST_SCOPE=long npm test` when touching process start, shutdown, faults or tracing.
//   stores   every suite whose outcome can depend on the stores, the long ones included (CI's pass on PostgreSQL and
//            Redis): it leaves out the store-free suites, which start no system, open no database and reach no Redis,
//            so a second pass on other stores would repeat them exactly.
//   all      every suite.
// tests/repository/suite-scopes.ts holds the store-free list to what the suites import.
// A suite is a file tests/<name>.test.ts; a group suite's topics are the files of tests/<name>/.
export const STORE_FREE_SUITES = ['repository', 'units'];

/** Suites left to the long run (TEST_SCOPE=long), with the cheaper suite that keeps their contract rule in `npm test`. */
export const LONG_SUITES = [
  // `npm start` and each service's entry on new and reused data directories; README's start is also run by CI itself.
  'fresh-start',
  // PDP and issuer processes killed and restarted (pdp-client and gateway-dependencies keep the 503s in npm test).
  'faults-services',
  // PostgreSQL crashed and hung, a PDP cut off from it, Redis restarted, under traffic (gateway-dependencies keeps
  // Redis down in npm test).
  'faults-stores',
  // SIGTERM under load through four processes.
  'graceful-shutdown',
  // OpenTelemetry export from separate processes to a receiver (not a contract rule).
  'tracing',
];

const pattern = (name) => `/tests/${name}\\.test\\.ts$`;

/** jest's testPathIgnorePatterns for a scope. */
export function ignoredSuites(scope) {
  if (scope === 'all') return [];
  if (scope === 'stores') return STORE_FREE_SUITES.map(pattern);
  if (scope === 'long') return [`/tests/(?!(${LONG_SUITES.join('|')})\\.test\\.ts$)[^/]+\\.test\\.ts$`];
  return LONG_SUITES.map(pattern);
}
