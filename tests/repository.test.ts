// The repository's own files held to the code: README and docs (links, commands, generated references), the OpenAPI
// documents, the deployment files, the k6 scripts and the bench's tools, and the suites' scopes.
// A group suite: its topics are the files of tests/repository/ (docs/development.md, "Suites and topics").
import './repository/deployment-files.js';
import './repository/k6-tools.js';
import './repository/openapi.js';
import './repository/readme.js';
import './repository/suite-scopes.js';
import './repository/sweep-chart.js';
