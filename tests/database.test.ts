// The database as the services use it: limits, sessions, the migration lock and prepared statements.
// One jest suite: its topics (tests/database/) share one module registry, so the product's modules load once for all
// of them; each topic starts what it uses in its own describe block and closes it there (docs/development.md,
// "Suites and topics").
import './database/database-limits.js';
import './database/database-sessions.js';
import './database/migration-lock.js';
import './database/prepared-statements.js';
