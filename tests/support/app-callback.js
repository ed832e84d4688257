// The third-party app's redirect URI for the run's sign-ins (plain JavaScript: jest's global setup starts it outside
// jest's TypeScript transform): a listener in the jest process that answers what the issuer sends back with a page, as
// an app does. Where nothing listens, Chromium shows its error page, which it renders in a renderer process of its
// own and leaves for a new one at the next navigation: each sign-in then cost Chromium ~0.57 s of CPU instead of
// ~0.40 s and three processes instead of none (docs/performance.md, "The test suite's time").
import { createServer } from 'node:http';

/** The workers inherit the redirect URI from the environment the global setup sets. */
const APP_REDIRECT_URI_ENV = 'TEST_APP_REDIRECT_URI';

/** Where apps registered by the suites are sent back to: the run's listener, else an address where nothing listens. */
export const appRedirectUri = () => process.env[APP_REDIRECT_URI_ENV] ?? 'http://127.0.0.1:8400/callback';

// On globalThis: jest hands the global setup's globals, not its module state, to the global teardown.
const RUN_CALLBACK = Symbol.for('tests.appCallback');

/** Starts the run's listener (not for TEST_SCOPE=long, whose suites sign in nobody) unless a redirect URI is given. */
export async function startAppCallback() {
  if (process.env.TEST_SCOPE === 'long' || process.env[APP_REDIRECT_URI_ENV]) return;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end('<!doctype html><title>Sample app</title><p>The app has the authorization response.</p>');
  });
  await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
  globalThis[RUN_CALLBACK] = server;
  process.env[APP_REDIRECT_URI_ENV] = `http://127.0.0.1:${server.address().port}/callback`;
}

export async function stopAppCallback() {
  const server = globalThis[RUN_CALLBACK];
  if (!server) return;
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
}
