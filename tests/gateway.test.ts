// The gateway: routing, its plugins, its dependencies failing, rate limits and their blocks, logs, metrics and the
// dashboards.
// One jest suite: its topics (tests/gateway/) share one module registry, so the product's modules load once for all
// of them; each topic starts what it uses in its own describe block and closes it there (docs/development.md,
// "Suites and topics").
import './gateway/dashboards.js';
import './gateway/gateway-dependencies.js';
import './gateway/gateway-plugins.js';
import './gateway/gateway.js';
import './gateway/observability.js';
import './gateway/rate-limit-blocks.js';
import './gateway/rate-limit.js';
