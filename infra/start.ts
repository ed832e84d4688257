// `npm start`: the four services on their configured ports, embedded PostgreSQL and in-process rate limiting unless
// DATABASE_URL / REDIS_URL are set, demo data seeded, URLs and demo credentials printed.
import { startTracing } from '../common/tracing.js';

// Tracing first: its instrumentations must see the modules imported below (common/tracing.ts). One SDK for the four
// services: each span's platform.service attribute says which made it.
await startTracing('integration-platform');
const { ConfigError, loadConfig } = await import('../common/config.js');
const { startSystem } = await import('./system.js');
const { createLogger } = await import('../common/log.js');
const { checkDistinctPorts, closeOnSignal, exitOnStartError } = await import('../common/service.js');
const { DEMO, seedDemo } = await import('./seed.js');

let config;
try {
  config = loadConfig({ PGLITE_DATA_DIR: '.data/pglite', ...process.env });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`npm start: ${err.message}`);
  process.exit(2);
}
const system = await Promise.resolve()
  .then(() => checkDistinctPorts(config))
  .then(() => startSystem(config))
  .catch(exitOnStartError('npm start'));
const demo = await seedDemo(system.db.knex, system.pdpUrl, system.adminToken);

console.log(
  `
Third-party integration platform is up.
  issuer  (auth_url)  ${system.authUrl}    discovery: ${system.authUrl}/.well-known/openid-configuration
  gateway (base_url)  ${system.baseUrl}
  PDP + admin API     ${system.pdpUrl}/admin/v1
  admin console       ${system.pdpUrl}/admin/console   (sign in with ADMIN_TOKEN or a tenant admin key)
  backend (internal)  ${system.backendUrl}
  management          ${
    system.managementUrl
      ? `${system.managementUrl}/metrics  /livez  /readyz`
      : 'off (set MANAGEMENT_PORT for /metrics, /livez, /readyz)'
  }
  database            ${
    config.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.PGLITE_DATA_DIR}`
  }
  rate limiting       ${config.REDIS_URL ? 'Redis (REDIS_URL)' : 'in-process'}

Demo (${demo.created ? 'seeded now' : 'already seeded'}):
  ADMIN_TOKEN   ${system.adminToken}${
    config.ADMIN_TOKEN ? '' : '   (generated for this run; set ADMIN_TOKEN to fix it)'
  }
  tenant        ${demo.tenantId} (label ${DEMO.tenantLabel}, plan L2)
  person login  ${DEMO.username} / ${DEMO.password}   (personId ${demo.personId})
  client        ${demo.clientId} (public, PKCE S256), redirect URI ${DEMO.redirectUri}
  capabilities  ${DEMO.capabilities.join(' ')}
  extension     ${demo.extensionId} ("${DEMO.extensionName}", schema version 1, owned by the demo app)

Next:
  sign in as the demo person and print an access token:   npm run -s demo-token
  call the API with it:   curl -H "Authorization: Bearer $(npm run -s demo-token)" ${system.baseUrl}/me
  prepare a k6 run (infra/k6/README.md):   ADMIN_TOKEN=${system.adminToken} npm run admin -- seed-load ` +
    `--tenant ${demo.tenantId} --client ${demo.clientId} --extension ${demo.extensionId} --persons 20
`,
);

closeOnSignal(system.telemetry, createLogger('system', config.LOG_LEVEL), () => system.close());
