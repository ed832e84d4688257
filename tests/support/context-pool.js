// Browser contexts kept for reuse (plain JavaScript: the suites' jest environment, which jest loads outside its
// TypeScript transform, keeps one pool per worker; tests/support/browser.ts one per browser it launches itself).

/**
 * `browser`, whose contexts are kept when closed, each with its first page, for its next `newContext()` with the same
 * options: blank, its viewport as it was, its cookies and permissions cleared. That is all the state the product's
 * pages keep in a browser (none uses web storage), so it starts as a new one does; a new context and page cost
 * Chromium ~0.6 s of CPU more than a page it has rendered before (docs/performance.md, "The test suite's time").
 * Contexts open at once are separate contexts.
 */
export function reusingContexts(browser) {
  const closed = new Map();
  const openContext = browser.newContext.bind(browser);
  browser.newContext = async (options = {}) => {
    const key = JSON.stringify(options);
    const reopen = closed.get(key)?.pop();
    if (reopen) return reopen();
    return reusable(await openContext(options), (again) => closed.set(key, [...(closed.get(key) ?? []), again]));
  };
  // playwright's own newPage marks the new context as its page's, which refuses newPage() to whoever is handed the
  // context next: here a browser's page is the page of a context of the pool, which closes with it. A function, so
  // that a view of this browser (browser.ts) gets the context through its own newContext.
  browser.newPage = async function (options = {}) {
    const context = await this.newContext(options);
    const page = await context.newPage();
    // When the page closes because the connection does, the context goes with it: nothing is left to keep.
    page.once('close', () => context.close().catch(() => {}));
    return page;
  };
  return browser;
}

/** `context`, whose close keeps it and its first page, handing `keep` the way to open it again. */
function reusable(context, keep) {
  const openPage = context.newPage.bind(context);
  let first;
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
