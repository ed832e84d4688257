// The admin API, its CLI, tenant admin keys, platform secrets, the audit trail and the management endpoints.
// One jest suite: its topics (tests/admin/) share one module registry, so the product's modules load once for all of
// them; each topic starts what it uses in its own describe block and closes it there (docs/development.md, "Suites
// and topics").
import './admin/admin-api.js';
import './admin/admin-cli.js';
import './admin/admin-row-locks.js';
import './admin/audit-trail.js';
import './admin/management.js';
import './admin/platform-secrets.js';
import './admin/tenant-admin-keys.js';
