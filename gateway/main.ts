// Entry: the gateway alone, or `validate <file>` to check a gateway file without starting anything (exit 0/1).
// Running needs the issuer (AUTH_URL), the PDP and the backend reachable, INTERNAL_SECRET and the database (metering).
import { openServiceDatabase, requireInternalSecret, runService } from '../common/service.js';
import { GatewayFileError, loadGatewayFile } from './gateway-file.js';
import { gatewayTargetsFrom, startGateway } from './service.js';

const [command, file] = process.argv.slice(2);
if (command === 'validate') {
  if (!file) {
    console.error('usage: npm run gateway -- validate <file>');
    process.exit(1);
  }
  try {
    const def = loadGatewayFile(file);
    console.log(`${file}: valid (${def.routes.length} routes; plugins in order: ${def.plugins.map((p) => p.plugin.name).join(' → ')})`);
  } catch (err) {
    if (!(err instanceof GatewayFileError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
} else {
  await runService('gateway', async (config, log, telemetry) => {
    const db = await openServiceDatabase(config, telemetry);
    const running = await startGateway(config, log, gatewayTargetsFrom(config, requireInternalSecret(config)), db.knex, telemetry);
    return { url: running.url, close: async () => (await running.close(), await db.close()) };
  });
}
