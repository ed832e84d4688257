// The admin console in a real browser: every page, and the jobs a tenant admin and an operator do with it.
// A group suite: its topics are the files of tests/console/ (docs/development.md, "Suites and topics").
import './console/admin-console-jobs.js';
import './console/admin-console.js';
