// Entry: the policies service alone (PDP decisions + admin API). Needs INTERNAL_SECRET, shared with the gateway.
import { openServiceDatabase, requireInternalSecret, runService } from '../common/service.js';
import { randomSecret } from '../common/secrets.js';
import { startPolicies } from './service.js';

await runService('policies', async (config, log, telemetry) => {
  const internalSecret = requireInternalSecret(config);
  const adminToken = config.ADMIN_TOKEN ?? randomSecret();
  if (!config.ADMIN_TOKEN) console.log(`ADMIN_TOKEN (generated for this run): ${adminToken}`);
  const db = await openServiceDatabase(config, telemetry);
  const running = await startPolicies({ config, log, knex: db.knex, telemetry, adminToken, internalSecret });
  return { url: running.url, close: async () => (await running.close(), await db.close()) };
});
