// Tokens as clients hold them: CORS at the token endpoint, its rate limits, revocation, machine clients, and hostile
// tokens at the gateway.
// A group suite: its topics are the files of tests/tokens/ (docs/development.md, "Suites and topics").
import './tokens/hostile-tokens.js';
import './tokens/machine-clients.js';
import './tokens/token-cors.js';
import './tokens/token-rate-limit.js';
import './tokens/token-revocation.js';
