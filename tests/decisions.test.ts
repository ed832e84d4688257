// The PDP's decisions through the running system: batching, fact revisions and the plan ceiling.
// One jest suite: its topics (tests/decisions/) share one module registry, so the product's modules load once for
// all of them; each topic starts what it uses in its own describe block and closes it there (docs/development.md,
// "Suites and topics").
import './decisions/pdp-batching.js';
import './decisions/pdp-fact-revisions.js';
import './decisions/plan-ceiling.js';
