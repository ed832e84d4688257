// Debian's Chromium driven by playwright-core: the login and consent pages are exercised as a person uses them.
import { mkdir, writeFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { types } from 'node:util';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import { BROWSER_ENDPOINT_ENV, CHROMIUM_PATH, LAUNCH_OPTIONS, WORKER_BROWSER } from './chromium.js';
import { reusingContexts } from './context-pool.js';

export { CHROMIUM_PATH };

/** Where a browser step that failed leaves what the page showed (not committed). */
export const FAILURE_ARTIFACTS = 'test-artifacts/failures';

/**
 * A browser of the suite's own. In a jest suite: a view of its worker's connection to the run's browser
 * (worker-browser-environment.js), whose close closes the contexts the suite left open, not the connection. Elsewhere
 * (the bench, a script): a connection to the run's browser when one is given, else a browser launched for it. Either
 * way the contexts the suite closes are reused with their first page (context-pool.js). playwright-core is loaded only
 * for the second: a suite's module registry would load all of it again.
 */
export async function launchBrowser(): Promise<Browser> {
  const worker = (globalThis as { [WORKER_BROWSER]?: () => Promise<Browser> })[WORKER_BROWSER];
  if (worker) return suiteView(await worker());
  const { chromium } = await import('playwright-core');
  const endpoint = process.env[BROWSER_ENDPOINT_ENV];
  return reusingContexts(await (endpoint ? chromium.connect(endpoint) : chromium.launch(LAUNCH_OPTIONS)));
}

/** One suite's use of the worker's browser: what it opens is its own, and closing it closes what it left open. */
function suiteView(worker: Browser): Browser {
  const opened = new Set<BrowserContext>();
  const view = Object.create(worker) as Browser;
  view.newContext = async (options) => {
    const context = await worker.newContext(options);
    opened.add(context);
    return context;
  };
  view.close = async () => {
    await Promise.all([...opened].map((context) => context.close()));
  };
  return view;
}

/** A finished download's content, read through playwright's stream (its `path()` is refused on a connected browser). */
export async function downloadedText(download: Download): Promise<string> {
  return text(await download.createReadStream());
}

/**
 * Runs `steps` on `page`. When they fail, the page's URL, the status of its last document response, its HTML and a
 * screenshot are saved under FAILURE_ARTIFACTS, and the error is rethrown naming them: a timeout then says what was on
 * the screen instead of what was awaited.
 */
export async function keepingPageOnFailure<T>(page: Page, label: string, steps: () => Promise<T>): Promise<T> {
  let lastDocument = 'none';
  const onResponse = (response: import('playwright-core').Response) => {
    if (response.request().isNavigationRequest() && response.frame() === page.mainFrame())
      lastDocument = `${response.status()} ${response.url()}`;
  };
  page.on('response', onResponse);
  try {
    return await steps();
  } catch (error) {
    const saved = await savePage(page, label, lastDocument, error).catch((e: Error) => `not saved: ${e.message}`);
    // playwright's errors come from the worker's realm, where `instanceof Error` of the suite's realm does not hold.
    if (types.isNativeError(error)) error.message += `\n(page kept: ${saved})`;
    throw error;
  } finally {
    page.off('response', onResponse);
  }
}

async function savePage(page: Page, label: string, lastDocument: string, error: unknown): Promise<string> {
  await mkdir(FAILURE_ARTIFACTS, { recursive: true });
  const base = `${FAILURE_ARTIFACTS}/${label.replace(/[^\w.-]+/g, '-')}-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
  const summary = [
    `url: ${page.url()}`,
    `last document response: ${lastDocument}`,
    `error: ${types.isNativeError(error) ? error.message : String(error)}`,
  ].join('\n');
  await writeFile(`${base}.txt`, `${summary}\n`);
  // A page stuck mid-navigation may never answer content(): wait for it no longer than for the screenshot.
  const html = await Promise.race([
    page.content(),
    new Promise<string>((given) => setTimeout(given, 5000, '<!-- no HTML within 5 s -->').unref()),
  ]).catch((e: Error) => `<!-- ${e.message} -->`);
  await writeFile(`${base}.html`, html);
  await page.screenshot({ path: `${base}.png`, fullPage: true, timeout: 5000 }).catch(() => undefined);
  return `${base}.{txt,html,png}; ${lastDocument}`;
}
