// Jest's global setup and teardown (plain JavaScript: jest loads them outside its TypeScript transform): the run's
// migrated template database (embedded runs), the run's one browser and the redirect URI its sign-ins end at, all
// handed to the workers by environment.
import { setup as setupDatabase, teardown as teardownDatabase } from './database-setup.js';
import { startRunBrowser, stopRunBrowser } from './chromium.js';
import { startAppCallback, stopAppCallback } from './app-callback.js';

export default async function setup() {
  // Chromium starts in the background while the template database is built (a blocking child process).
  const browser = startRunBrowser();
  const callback = startAppCallback();
  setupDatabase();
  await Promise.all([browser, callback]);
}

export async function teardown() {
  await Promise.all([stopRunBrowser(), stopAppCallback()]);
  teardownDatabase();
}
