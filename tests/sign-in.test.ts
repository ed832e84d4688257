// Signing in: the issuer's authorize, login, consent and token endpoints in a real browser, its adapter and purge,
// usernames per tenant, the sign-in throttle, account lifecycle and connected apps.
// A group suite: its topics are the files of tests/sign-in/ (docs/development.md, "Suites and topics").
import './sign-in/account-lifecycle.js';
import './sign-in/connected-apps.js';
import './sign-in/e2e-consent-flow.js';
import './sign-in/issuer-adapter.js';
import './sign-in/issuer-purge.js';
import './sign-in/issuer-request-reads.js';
import './sign-in/issuer.js';
import './sign-in/sign-in-throttle.js';
import './sign-in/usernames-per-tenant.js';
