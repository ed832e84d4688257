// The repository's own files held to the code: README and docs (links, commands, generated references), the OpenAPI
// documents, the deployment files, the k6 scripts and the bench's tools, and the suites' scopes.
// One jest suite: its topics (tests/repository/) share one module registry, so the product's modules load once for
// all of them; each topic starts what it uses in its own describe block and closes it there (docs/development.md,
// "Suites and topics").
import './repository/deployment-files.js';
import './repository/k6-tools.js';
import './repository/openapi.js';
import './repository/readme.js';
import './repository/suite-scopes.js';
import './repository/sweep-chart.js';
