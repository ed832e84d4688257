// How the suites start Debian's Chromium (plain JavaScript: jest's global setup, outside its TypeScript transform,
// starts the run's one browser; each jest worker connects to it once, worker-browser-environment.js). One browser for
// the whole run instead of one a suite: a suite's own browser cost the machine 1.7–2.3 s of CPU more than a
// connection, and the suites' contexts are as separate in one browser as in several (docs/performance.md, "The test
// suite's time").
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The run's browser, for the workers (they inherit the environment set by the global setup). */
export const BROWSER_ENDPOINT_ENV = 'TEST_BROWSER_ENDPOINT';

/** Where a suite finds its jest worker's connection to it (worker-browser-environment.js, browser.ts). */
export const WORKER_BROWSER = Symbol.for('tests.workerBrowser');

export const LAUNCH_OPTIONS = {
  executablePath: CHROMIUM_PATH,
  headless: true,
  // No network beyond loopback here: keep Chromium from reaching out at start.
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

// On globalThis: jest hands the global setup's globals, not its module state, to the global teardown.
const RUN_BROWSER = Symbol.for('tests.runBrowser');

/**
 * Starts the run's browser unless the run has no suite that uses one (the long scope's suites do not, see
 * suite-scopes.js) or a browser is already given. A browser that cannot start is left to the suites that need it:
 * they launch their own and fail there, naming the cause, while the others run.
 */
export async function startRunBrowser() {
  if (process.env.TEST_SCOPE === 'long' || process.env[BROWSER_ENDPOINT_ENV]) return;
  // Loaded here rather than at the top: browser.ts imports this module into every suite's module registry.
  const { chromium } = await import('playwright-core');
  const server = await chromium.launchServer(LAUNCH_OPTIONS).catch(() => undefined);
  if (!server) return;
  globalThis[RUN_BROWSER] = server;
  process.env[BROWSER_ENDPOINT_ENV] = server.wsEndpoint();
}

export async function stopRunBrowser() {
  await globalThis[RUN_BROWSER]?.close();
}
