// Entry: the policies service alone (PDP decisions + admin API). Needs INTERNAL_SECRET, shared with the gateway.
import { startTracing } from '../common/tracing.js';

// Tracing first: its instrumentations must see the modules imported below (common/tracing.ts).
await startTracing('policies');
const { openServiceDatabase, requireInternalSecret, runService } = await import('../common/service.js');
const { randomSecret } = await import('../common/secrets.js');
const { startPolicies } = await import('./service.js');

await runService('policies', async (config, log, telemetry) => {
  const internalSecret = requireInternalSecret(config);
  const adminToken = config.ADMIN_TOKEN ?? randomSecret();
  if (!config.ADMIN_TOKEN) console.log(`ADMIN_TOKEN (generated for this run): ${adminToken}`);
  const { db, revisions } = await openServiceDatabase(config, log, telemetry);
  const running = await startPolicies({ config, log, knex: db.knex, telemetry, adminToken, internalSecret, revisions });
  return { url: running.url, close: async () => (await running.close(), await db.close()) };
});
