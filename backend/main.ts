// Entry: the backend alone (internal; binds to loopback and answers only the gateway).
import { startTracing } from '../common/tracing.js';

// Tracing first: its instrumentations must see the modules imported below (common/tracing.ts).
await startTracing('backend');
const { openServiceDatabase, requireInternalSecret, runService } = await import('../common/service.js');
const { startBackend } = await import('./service.js');

await runService('backend', async (config, log, telemetry) => {
  const secret = requireInternalSecret(config);
  const { db } = await openServiceDatabase(config, log, telemetry);
  const running = await startBackend({ config, log, knex: db.knex, telemetry, internalSecret: secret });
  return { url: running.url, close: async () => (await running.close(), await db.close()) };
});
