// The modules that need no running system: the gateway file and its plugins' settings, configuration, token
// verification, the PDP's evaluation and client, the batch writer and the test databases' naming.
// A group suite: its topics are the files of tests/units/ (docs/development.md, "Suites and topics").
import './units/batch-writer.js';
import './units/config.js';
import './units/gateway-file.js';
import './units/pdp-client.js';
import './units/pdp-evaluate.js';
import './units/test-databases.js';
import './units/verify-token.js';
