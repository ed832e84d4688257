// Entry: the gateway alone, `validate [file]` to check a gateway file without starting anything (exit 0/1), or
// `--help`. Running needs the issuer (AUTH_URL), the PDP and the backend reachable, INTERNAL_SECRET and the database
// (metering).
import { startTracing } from '../common/tracing.js';

// Tracing first: its instrumentations must see the modules imported below (common/tracing.ts).
await startTracing('gateway');
const { openServiceDatabase, requireInternalSecret, runService } = await import('../common/service.js');
const { GatewayFileError, loadGatewayFile } = await import('./gateway-file.js');
const { gatewayFileOf, gatewayTargetsFrom, startGateway } = await import('./service.js');

const USAGE = `usage: npm run gateway [-- <command>]

  (no command)      start the gateway (settings: README's configuration table; the file: GATEWAY_CONFIG)
  validate [file]   check a gateway file against the plugins' schemas and the contract, start nothing;
                    without a file, the one the gateway would read (GATEWAY_CONFIG, else gateway/gateway.yaml)
  --help            this text`;

const [command, file] = process.argv.slice(2);
if (command === '--help' || command === '-h' || command === 'help') {
  console.log(USAGE);
} else if (command === 'validate') {
  const path = file ?? gatewayFileOf({ GATEWAY_CONFIG: process.env.GATEWAY_CONFIG?.trim() || undefined });
  try {
    const def = loadGatewayFile(path);
    console.log(
      `${path}: valid (${def.routes.length} routes; ` +
        `plugins in order: ${def.plugins.map((p) => p.plugin.name).join(' → ')})`,
    );
  } catch (err) {
    if (!(err instanceof GatewayFileError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
} else if (command !== undefined) {
  console.error(`unknown command "${command}"\n${USAGE}`);
  process.exit(2);
} else {
  await runService('gateway', async (config, log, telemetry) => {
    const { db } = await openServiceDatabase(config, log, telemetry);
    const running = await startGateway({
      config,
      log,
      knex: db.knex,
      telemetry,
      targets: gatewayTargetsFrom(config, requireInternalSecret(config)),
    });
    return { url: running.url, close: async () => (await running.close(), await db.close()) };
  });
}
