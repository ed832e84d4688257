// Jest's global setup and teardown (plain JavaScript: jest loads them outside its TypeScript transform): the run's
// migrated template database (embedded runs) and the run's one browser, both handed to the workers by environment.
import { setup as setupDatabase, teardown as teardownDatabase } from './database-setup.js';
import { startRunBrowser, stopRunBrowser } from './chromium.js';

export default async function setup() {
  // Chromium starts in the background while the template database is built (a blocking child process).
  const browser = startRunBrowser();
  setupDatabase();
  await browser;
}

export async function teardown() {
  await stopRunBrowser();
  teardownDatabase();
}
