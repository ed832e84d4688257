// Signing in: the issuer's authorize, login, consent and token endpoints in a real browser, its adapter and purge,
// usernames per tenant, the sign-in throttle, account lifecycle and connected apps.
// One jest suite: its topics (tests/sign-in/) share one module registry, so the product's modules load once for all
// of them; each topic starts what it uses in its own describe block and closes it there (docs/development.md,
// "Suites and topics").
import './sign-in/account-lifecycle.js';
import './sign-in/connected-apps.js';
import './sign-in/e2e-consent-flow.js';
import './sign-in/issuer-adapter.js';
import './sign-in/issuer-purge.js';
import './sign-in/issuer-request-reads.js';
import './sign-in/issuer.js';
import './sign-in/sign-in-throttle.js';
import './sign-in/usernames-per-tenant.js';
