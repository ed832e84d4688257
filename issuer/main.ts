// Entry: the issuer alone, configured from the environment (README "Running each service alone"). runService loads
// and validates the configuration, logs the URL and closes on SIGINT/SIGTERM; openServiceDatabase opens and migrates.
import { openServiceDatabase, runService } from '../common/service.js';
import { startIssuer } from './service.js';

await runService('issuer', async (config, log, telemetry) => {
  const db = await openServiceDatabase(config, telemetry);
  const running = await startIssuer({ config, log, knex: db.knex, telemetry });
  return { url: running.url, close: async () => (await running.close(), await db.close()) };
});
