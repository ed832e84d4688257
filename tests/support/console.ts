// The admin console (docs/admin-console.md) as the console suites drive it in Chromium: where its pages are, signing
// in with a key, pressing a button and waiting for the page it leads to (a step that fails keeps what the page showed:
// tests/support/browser.ts), and the screenshot kept of each page.
import { mkdirSync } from 'node:fs';
import type { BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { keepingPageOnFailure } from './browser.js';

/** Where the suites keep a screenshot of every page they show (a reviewer's look at the console without running it). */
export const CONSOLE_ARTIFACTS = 'test-artifacts/admin-console';

/** Saves a full-page screenshot of `page` as `<CONSOLE_ARTIFACTS>/<name>.png`. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${CONSOLE_ARTIFACTS}/${name}.png`, fullPage: true });
}

/** The console of the PDP at `pdpUrl`. */
export const consoleOf = (pdpUrl: string) => `${pdpUrl}/admin/console`;

/** The one row of the table whose header cell or cells contain `text`. */
export const row = (page: Page, text: string) => page.getByRole('row').filter({ hasText: text });

/** Clicks the button (or link) named `name` and waits for the page it leads to (after any redirect). */
export function press(page: Page, name: string, role: 'button' | 'link' = 'button'): Promise<PageResponse> {
  return keepingPageOnFailure(page, `console-${role}-${name}`, async () => {
    const [response] = await Promise.all([
      page.waitForNavigation(),
      page.getByRole(role, { name, exact: true }).click(),
    ]);
    return response!;
  });
}

/** Signs in to the console at `consoleUrl` with `key` in a new page of `context`: the page and the sign-in's answer. */
export async function signIn(
  context: BrowserContext,
  consoleUrl: string,
  key: string,
): Promise<{ page: Page; response: PageResponse }> {
  const page = await context.newPage();
  await keepingPageOnFailure(page, 'console-sign-in', async () => {
    await page.goto(`${consoleUrl}/sign-in`);
    await page.getByLabel('Admin key or operator token').fill(key);
  });
  return { page, response: await press(page, 'Sign in') };
}
