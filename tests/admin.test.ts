// The admin API, its CLI, tenant admin keys, platform secrets, the audit trail and the management endpoints.
// A group suite: its topics are the files of tests/admin/ (docs/development.md, "Suites and topics").
import './admin/admin-api.js';
import './admin/admin-cli.js';
import './admin/admin-row-locks.js';
import './admin/audit-trail.js';
import './admin/management.js';
import './admin/platform-secrets.js';
import './admin/tenant-admin-keys.js';
