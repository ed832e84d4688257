// Entry: the issuer alone, configured from the environment (README "Running each service alone"). runService loads
// and validates the configuration, logs the URL and closes on SIGINT/SIGTERM; openServiceDatabase opens and migrates.
import { startTracing } from '../common/tracing.js';

// Tracing first: its instrumentations must see the modules imported below (common/tracing.ts).
await startTracing('issuer');
const { openServiceDatabase, runService } = await import('../common/service.js');
const { startIssuer } = await import('./service.js');

await runService('issuer', async (config, log, telemetry) => {
  const { db } = await openServiceDatabase(config, log, telemetry);
  const running = await startIssuer({ config, log, knex: db.knex, telemetry });
  return { url: running.url, close: async () => (await running.close(), await db.close()) };
});
