// The database as the services use it: limits, sessions, the migration lock and prepared statements.
// A group suite: its topics are the files of tests/database/ (docs/development.md, "Suites and topics").
import './database/database-limits.js';
import './database/database-sessions.js';
import './database/migration-lock.js';
import './database/prepared-statements.js';
