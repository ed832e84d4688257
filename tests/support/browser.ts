// Debian's Chromium driven by playwright-core: the login and consent pages are exercised as a person uses them.
import { mkdir, writeFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { chromium, type Browser, type BrowserContext, type Download, type Page } from 'playwright-core';
import { BROWSER_ENDPOINT_ENV, CHROMIUM_PATH, LAUNCH_OPTIONS } from './chromium.js';

export { CHROMIUM_PATH };

/** Where a browser step that failed leaves what the page showed (not committed). */
export const FAILURE_ARTIFACTS = 'test-artifacts/failures';

/**
 * A browser of the suite's own: a connection to the run's browser when jest's global setup started one (closing it
 * closes the suite's contexts, not the browser), else a browser launched for it (the bench, a script). The contexts
 * the suite closes are reused with their first page (`reusingContexts`).
 */
export async function launchBrowser(): Promise<Browser> {
  const endpoint = process.env[BROWSER_ENDPOINT_ENV];
  return reusingContexts(await (endpoint ? chromium.connect(endpoint) : chromium.launch(LAUNCH_OPTIONS)));
}

/**
 * A context the suite closes is kept for its next `browser.newContext()` with the same options, and its first page
 * for that context's next `newPage()`: blank, its viewport as it was, the context's cookies and permissions cleared.
 * That is all the state the product's pages keep in a browser (none uses web storage), so it starts as a new one
 * does; a new context and page cost Chromium ~0.6 s of CPU more than a page it has rendered before
 * (docs/performance.md, "The test suite's time"). Contexts open at once are separate contexts.
 */
function reusingContexts(browser: Browser): Browser {
  const closed = new Map<string, (() => BrowserContext)[]>();
  const openContext = browser.newContext.bind(browser);
  browser.newContext = async (options = {}) => {
    const key = JSON.stringify(options);
    const reopen = closed.get(key)?.pop();
    if (reopen) return reopen();
    return reusable(await openContext(options), (again) => closed.set(key, [...(closed.get(key) ?? []), again]));
  };
  return browser;
}

/** `context`, whose close keeps it and its first page, handing `keep` the way to open it again. */
function reusable(context: BrowserContext, keep: (reopen: () => BrowserContext) => void): BrowserContext {
  const openPage = context.newPage.bind(context);
  let first: { page: Page; viewport: ReturnType<Page['viewportSize']> } | undefined;
  let firstFree = false;
  let open = true;
  context.newPage = async () => {
    if (first && firstFree && !first.page.isClosed()) return ((firstFree = false), first.page);
    const page = await openPage();
    if (!first || first.page.isClosed()) first = { page, viewport: page.viewportSize() };
    return page;
  };
  context.close = async () => {
    if (!open) return;
    open = false;
    const kept = first && !first.page.isClosed() ? first : undefined;
    await Promise.all(context.pages().flatMap((page) => (page === kept?.page ? [] : [page.close()])));
    // A page that will not go blank (a navigation of its own in the way) is closed rather than kept.
    const blank = await kept?.page.goto('about:blank', { timeout: 5000 }).then(
      () => true,
      () => false,
    );
    if (kept && blank && kept.viewport) await kept.page.setViewportSize(kept.viewport);
    if (kept && !blank) await kept.page.close();
    first = blank ? kept : undefined;
    await Promise.all([context.clearCookies(), context.clearPermissions()]);
    firstFree = true;
    keep(() => ((open = true), context));
  };
  return context;
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
    if (error instanceof Error) error.message += `\n(page kept: ${saved})`;
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
    `error: ${error instanceof Error ? error.message : String(error)}`,
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
