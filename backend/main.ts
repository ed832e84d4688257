// Entry: the backend alone (internal; binds to loopback and answers only the gateway).
import { openServiceDatabase, requireInternalSecret, runService } from '../common/service.js';
import { startBackend } from './service.js';

await runService('backend', async (config, log, telemetry) => {
  const secret = requireInternalSecret(config);
  const db = await openServiceDatabase(config, telemetry);
  const running = await startBackend({ config, log, knex: db.knex, telemetry, internalSecret: secret });
  return { url: running.url, close: async () => (await running.close(), await db.close()) };
});
