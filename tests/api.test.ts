// The REST API's resources: me and tenant, persons and person extensions with their quotas, existence and tenant
// isolation, data ownership, bad input and hostile schemas, and the public API fuzzed.
// A group suite: its topics are the files of tests/api/ (docs/development.md, "Suites and topics").
import './api/backend-context.js';
import './api/bad-input.js';
import './api/data-ownership.js';
import './api/existence.js';
import './api/fuzz-public-api.js';
import './api/hostile-schemas.js';
import './api/person-extension-quotas.js';
import './api/person-extensions.js';
import './api/tenant-isolation.js';
