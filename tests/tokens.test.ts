// Tokens as clients hold them: CORS at the token endpoint, its rate limits, revocation, machine clients, and hostile
// tokens at the gateway.
// One jest suite: its topics (tests/tokens/) share one module registry, so the product's modules load once for all
// of them; each topic starts what it uses in its own describe block and closes it there (docs/development.md,
// "Suites and topics").
import './tokens/hostile-tokens.js';
import './tokens/machine-clients.js';
import './tokens/token-cors.js';
import './tokens/token-rate-limit.js';
import './tokens/token-revocation.js';
