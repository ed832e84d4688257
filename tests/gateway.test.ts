// The gateway: routing, its plugins, its dependencies failing, rate limits and their blocks, logs, metrics and the
// dashboards.
// A group suite: its topics are the files of tests/gateway/ (docs/development.md, "Suites and topics").
import './gateway/dashboards.js';
import './gateway/gateway-dependencies.js';
import './gateway/gateway-plugins.js';
import './gateway/gateway.js';
import './gateway/observability.js';
import './gateway/rate-limit-blocks.js';
import './gateway/rate-limit.js';
