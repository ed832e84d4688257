// The PDP's decisions through the running system: batching, fact revisions and the plan ceiling.
// A group suite: its topics are the files of tests/decisions/ (docs/development.md, "Suites and topics").
import './decisions/pdp-batching.js';
import './decisions/pdp-fact-revisions.js';
import './decisions/plan-ceiling.js';
