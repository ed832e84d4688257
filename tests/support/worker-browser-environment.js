// The suites' jest environment (plain JavaScript: jest loads it outside its TypeScript transform): jest's Node
// environment, plus one connection per jest worker to the run's browser, shared by every suite the worker runs. jest
// gives each suite a module registry of its own, so a connection made by the suite's code is made again by the next
// suite, with playwright's client loaded again and a new first context in Chromium: ~1 s of the machine's CPU a suite
// (docs/performance.md, "The test suite's time"). This module is loaded once per worker process, and so its connection
// and its pool of closed contexts (context-pool.js) outlive the suites; tests/support/browser.ts hands each suite a
// view of it whose close closes only the suite's own contexts.
import { TestEnvironment } from 'jest-environment-node';
import { BROWSER_ENDPOINT_ENV, WORKER_BROWSER } from './chromium.js';
import { reusingContexts } from './context-pool.js';

// jest-worker's message that ends a worker (CHILD_MESSAGE_END in its protocol, which it does not export). Should it
// change, a worker is still ended, by jest's kill half a second later and with a warning.
const CHILD_MESSAGE_END = 2;

let connection;

/** Closes the connection, if any, so that nothing keeps the process alive. */
async function disconnect() {
  const browser = await connection?.catch(() => undefined);
  connection = undefined;
  await browser?.close();
}

// A worker is a child process jest talks to over IPC; jest's own process (one suite, --runInBand) has no channel.
const inWorker = typeof process.send === 'function';
// A worker keeps the connection for its next suite until jest tells it to end: an open connection would keep it from
// exiting, and jest would kill it after half a second with a warning. The listener goes too, since a 'message'
// listener keeps the IPC channel, and so the process, alive.
function onEnd(message) {
  if (!Array.isArray(message) || message[0] !== CHILD_MESSAGE_END) return;
  process.off('message', onEnd);
  disconnect().catch(() => undefined);
}
if (inWorker) process.on('message', onEnd);

/** The worker's browser, connected once; a connection that failed is tried again by the next suite that asks. */
function workerBrowser(endpoint) {
  connection ??= import('playwright-core')
    .then(({ chromium }) => chromium.connect(endpoint))
    .then(reusingContexts, (error) => {
      connection = undefined;
      throw error;
    });
  return connection;
}

export default class WorkerBrowserEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    const endpoint = process.env[BROWSER_ENDPOINT_ENV];
    // A function that connects on its first call: a suite without a browser costs nothing.
    if (endpoint) this.global[WORKER_BROWSER] = () => workerBrowser(endpoint);
  }

  async teardown() {
    // In jest's own process nothing says which suite is the last, and an open connection would keep jest from exiting.
    if (!inWorker) await disconnect();
    await super.teardown();
  }
}
