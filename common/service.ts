// Running one service as its own process: configuration errors stop it with a clear message, signals close it.
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { databaseOptions, openDatabase, migrate, type Database } from './db.js';
import { openRevisionFeed, type RevisionFeed } from './revision-feed.js';
import type { RequestListener } from 'node:http';
import type { Knex } from 'knex';
import { ListenError, listen, markStoppingOnSignal, type Listening, type ListenOptions } from './http.js';
import { startManagement } from './management.js';
import { createTelemetry, type ServiceName, type Telemetry } from './telemetry.js';
import { flushTracing, traceServer } from './tracing.js';

/** What every service's start function takes, in one shape (each adds what only it needs). */
export interface ServiceDeps {
  config: Config;
  log: Logger;
  knex: Knex;
  telemetry: Telemetry;
}

export interface Running {
  url: string;
  close(): Promise<void>;
}

/** The setting each service's port comes from. */
const PORT_SETTINGS = {
  issuer: 'ISSUER_PORT',
  gateway: 'GATEWAY_PORT',
  policies: 'PDP_PORT',
  backend: 'BACKEND_PORT',
} as const satisfies Record<ServiceName, keyof Config>;

/**
 * npm start runs every service in one process: two of its port settings on the same port would fail at the second
 * listen, so they are refused first, naming both.
 */
export function checkDistinctPorts(config: Config): void {
  const settings = [...Object.values(PORT_SETTINGS), 'MANAGEMENT_PORT'] as const;
  const taken = new Map<number, string>();
  for (const setting of settings) {
    const port = config[setting];
    if (port === undefined || port === 0) continue;
    const other = taken.get(port);
    if (other)
      throw new ConfigError(
        `${other} and ${setting} are both ${port}: npm start runs every service, each needs its own port`,
      );
    taken.set(port, setting);
  }
}

/**
 * Listens for one service on LISTEN_HOST: every request counted, timed and logged (telemetry), then answered by `app`
 * (`options`: the request head's size limit, the answer to what the parser refuses).
 */
export async function serve(
  name: ServiceName,
  port: number,
  config: Config,
  telemetry: Telemetry,
  log: Logger,
  app: RequestListener,
  options: ListenOptions = {},
): Promise<Listening> {
  const http = await listen(port, config.LISTEN_HOST, PORT_SETTINGS[name], options);
  traceServer(http.server, http.port, name);
  http.server.on('request', telemetry.observe(name, log));
  http.server.on('request', app);
  return http;
}

/**
 * What a process does on SIGTERM/SIGINT: report unready at once (load balancers stop sending), let requests in flight
 * finish, flush background batches and close pools (each `close`), export the spans still queued (tracing on, 2 s at
 * most), say so, then exit.
 */
export function closeOnSignal(telemetry: Telemetry, log: Logger, close: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log.info({ signal }, 'shutting down: unready, draining requests in flight');
      telemetry.drain();
      markStoppingOnSignal();
      void close()
        .then(flushTracing)
        .then(
          () => (log.info('stopped: requests drained, batches flushed, pools closed'), process.exit(0)),
          (err: unknown) => (log.error({ err }, 'shutdown failed'), process.exit(1)),
        );
    });
}

export async function runService(
  name: ServiceName,
  start: (config: Config, log: Logger, telemetry: Telemetry) => Promise<Running>,
): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`${name}: ${err.message}`);
    process.exit(2);
  }
  const log = createLogger(name, config.LOG_LEVEL);
  const telemetry = createTelemetry();
  const management =
    config.MANAGEMENT_PORT === undefined
      ? undefined
      : await startManagement(config.MANAGEMENT_PORT, config.LISTEN_HOST, telemetry).catch(exitOnStartError(name));
  const running = await start(config, log, telemetry).catch(exitOnStartError(name));
  telemetry.started();
  log.info({ url: running.url, management: management?.url }, `${name} listening`);
  log.flush(); // at once: whoever started the process may be waiting for this line
  closeOnSignal(telemetry, log, async () => (await running.close(), await management?.close()));
}

/**
 * Ends the process with one clear line when a port cannot be had or a setting cannot be used (the embedded data
 * directory); other errors propagate.
 */
export const exitOnStartError =
  (name: string) =>
  (err: unknown): never => {
    if (!(err instanceof ListenError || err instanceof ConfigError)) throw err;
    console.error(`${name}: ${err.message}`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  };

/**
 * A service's own database handle, migrated (knex's migration lock makes concurrent starts safe), publishing the
 * revisions its changes commit to the deployment's revision feed (returned, for the PDP to read).
 */
export async function openServiceDatabase(
  config: Config,
  log: Logger,
  telemetry: Telemetry,
): Promise<{ db: Database; revisions: RevisionFeed | undefined }> {
  const db = await openDatabase(databaseOptions(config));
  telemetry.watchDatabase(db.knex);
  await migrate(db.knex);
  return { db, revisions: await openRevisionFeed(db, config, log, telemetry) };
}

/** A secret every process of a deployment must share; a lone process cannot make one up. */
export function requireInternalSecret(config: Config): string {
  if (!config.INTERNAL_SECRET) {
    console.error(
      'INTERNAL_SECRET must be set (>= 32 chars): the gateway, the PDP and the backend share it ' +
        'when they run as separate processes',
    );
    process.exit(2);
  }
  return config.INTERNAL_SECRET;
}
