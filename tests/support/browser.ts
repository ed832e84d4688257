// Debian's Chromium driven by playwright-core: the login and consent pages are exercised as a person uses them.
import { mkdir, writeFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { chromium, type Browser, type Download, type Page } from 'playwright-core';
import { BROWSER_ENDPOINT_ENV, CHROMIUM_PATH, LAUNCH_OPTIONS } from './chromium.js';

export { CHROMIUM_PATH };

/** Where a browser step that failed leaves what the page showed (not committed). */
export const FAILURE_ARTIFACTS = 'test-artifacts/failures';

/**
 * A browser of the suite's own: a connection to the run's browser when jest's global setup started one (closing it
 * closes the suite's contexts, not the browser), else a browser launched for it (the bench, a script).
 */
export function launchBrowser(): Promise<Browser> {
  const endpoint = process.env[BROWSER_ENDPOINT_ENV];
  return endpoint ? chromium.connect(endpoint) : chromium.launch(LAUNCH_OPTIONS);
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
