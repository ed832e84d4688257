// The whole system in one process: one database handle shared by the four services (required for embedded
// PGlite, which is a single backend), each service still on its own port as in production.
import { loadConfig, type Config } from '../common/config.js';
import type { DestinationStream } from 'pino';
import { createLogger } from '../common/log.js';
import { databaseOptions, migrate, openDatabase, type Database } from '../common/db.js';
import { openRevisionFeed } from '../common/revision-feed.js';
import { randomSecret } from '../common/secrets.js';
import type { Running } from '../common/service.js';
import { startManagement } from '../common/management.js';
import { createTelemetry, type Telemetry } from '../common/telemetry.js';
import { startIssuer } from '../issuer/service.js';
import { startPolicies } from '../policies/service.js';
import { startBackend } from '../backend/service.js';
import { startGateway } from '../gateway/service.js';

export interface System {
  authUrl: string;
  baseUrl: string;
  pdpUrl: string;
  backendUrl: string;
  adminToken: string;
  db: Database;
  config: Config;
  services: Record<'issuer' | 'policies' | 'backend' | 'gateway', Running>;
  telemetry: Telemetry;
  /** The process's /metrics, /livez, /readyz (none with ephemeral ports). */
  managementUrl: string | undefined;
  close(): Promise<void>;
}

export interface SystemOptions {
  /** Listen on free ports instead of the configured ones (tests). */
  ephemeralPorts?: boolean;
  /** Use this database instead of opening one from DATABASE_URL / PGLITE_DATA_DIR. */
  db?: Database;
  /** Where the services' log lines go instead of stdout. */
  logDestination?: DestinationStream;
}

export async function startSystem(config: Config = loadConfig(), opts: SystemOptions = {}): Promise<System> {
  const log = (name: string) => createLogger(name, config.LOG_LEVEL, opts.logDestination);
  const db = opts.db ?? (await openDatabase(databaseOptions(config)));
  await migrate(db.knex);
  const telemetry = createTelemetry();
  telemetry.watchDatabase(db.knex);
  const revisions = await openRevisionFeed(db, config, log('database'), telemetry);
  const adminToken = config.ADMIN_TOKEN ?? randomSecret();
  const internalSecret = config.INTERNAL_SECRET ?? randomSecret();
  const ports = opts.ephemeralPorts
    ? { ...config, ISSUER_PORT: 0, PDP_PORT: 0, BACKEND_PORT: 0, GATEWAY_PORT: 0 }
    : config;

  const shared = { knex: db.knex, telemetry };
  const issuer = await startIssuer({ ...shared, config, log: log('issuer'), ephemeralPort: opts.ephemeralPorts });
  // The issuer's URL as it answers (its own port, when ephemeral): the console shows its token endpoint.
  const policies = await startPolicies({
    ...shared,
    config: { ...ports, AUTH_URL: issuer.url },
    log: log('policies'),
    adminToken,
    internalSecret,
    revisions,
  });
  const backend = await startBackend({ ...shared, config: ports, log: log('backend'), internalSecret });
  const gateway = await startGateway({
    ...shared,
    config: ports,
    log: log('gateway'),
    targets: { authUrl: issuer.url, pdpUrl: policies.url, backendUrl: backend.url, internalSecret },
  });
  telemetry.started();
  // One management listener for the process when MANAGEMENT_PORT asks for it (never for tests, which run many systems).
  const management =
    opts.ephemeralPorts || config.MANAGEMENT_PORT === undefined
      ? undefined
      : await startManagement(config.MANAGEMENT_PORT, config.LISTEN_HOST, telemetry);

  return {
    authUrl: issuer.url,
    baseUrl: gateway.url,
    pdpUrl: policies.url,
    backendUrl: backend.url,
    adminToken,
    db,
    config: { ...config, AUTH_URL: issuer.url },
    services: { issuer, policies, backend, gateway },
    telemetry,
    managementUrl: management?.url,
    async close() {
      for (const s of [gateway, backend, policies, issuer]) await s.close();
      await management?.close();
      if (!opts.db) await db.close();
    },
  };
}
