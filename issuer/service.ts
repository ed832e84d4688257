import type { Knex } from 'knex';
import type { Config } from '../common/config.js';
import { listen } from '../common/http.js';
import type { Logger } from '../common/log.js';
import type { Running } from '../common/service.js';
import { createIssuerApp } from './app.js';
import { startPurging } from './purge.js';
import { limiterStore } from '../common/rate-limit-store.js';

/**
 * Starts the issuer. With `ephemeralPort` it listens on any free port and takes that URL as its issuer (AUTH_URL),
 * which is how tests run several systems side by side.
 */
export async function startIssuer(config: Config, log: Logger, knex: Knex, ephemeralPort = false): Promise<Running> {
  const http = await listen(ephemeralPort ? 0 : config.ISSUER_PORT);
  const effective = ephemeralPort ? { ...config, AUTH_URL: http.url } : config;
  const limiters = limiterStore({ redisUrl: config.REDIS_URL, log });
  const { app } = await createIssuerApp({ knex, config: effective, log, limiters });
  http.server.on('request', app);
  const stopPurging = startPurging(knex, log, config.ISSUER_PURGE_INTERVAL_S);
  return { url: effective.AUTH_URL, close: async () => (await http.close(), await stopPurging(), await limiters.close()) };
}
