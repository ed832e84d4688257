// The admin console in a real browser: every page, and the jobs a tenant admin and an operator do with it.
// One jest suite: its topics (tests/console/) share one module registry, so the product's modules load once for all
// of them; each topic starts what it uses in its own describe block and closes it there (docs/development.md,
// "Suites and topics").
import './console/admin-console-jobs.js';
import './console/admin-console.js';
