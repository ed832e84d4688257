import type { RequestListener } from 'node:http';
import { serve, type Running, type ServiceDeps } from '../common/service.js';
import { createIssuerApp } from './app.js';
import { startPurging } from './purge.js';
import { tokenErrorRefusal } from './token-endpoint/errors.js';
import { connectRedis, limiterStore } from '../common/rate-limit-store.js';

/**
 * Starts the issuer. With `ephemeralPort` it listens on any free port and takes that URL as its issuer (AUTH_URL),
 * which is how tests run several systems side by side.
 */
export async function startIssuer({
  config,
  log,
  knex,
  telemetry,
  ephemeralPort = false,
}: ServiceDeps & { ephemeralPort?: boolean }): Promise<Running> {
  // The app needs the issuer's own URL, which an ephemeral port decides: it is attached once listening.
  let app: RequestListener | undefined;
  const http = await serve(
    'issuer',
    ephemeralPort ? 0 : config.ISSUER_PORT,
    config,
    telemetry,
    log,
    (req, res) => app!(req, res),
    { parserRefusal: tokenErrorRefusal },
  );
  const effective = ephemeralPort ? { ...config, AUTH_URL: http.url } : config;
  const redis = await connectRedis(config.REDIS_URL, log, telemetry, config.REDIS_CLUSTER);
  ({ app } = await createIssuerApp({ knex, config: effective, log, limiters: limiterStore(redis), telemetry }));
  telemetry.addReadinessCheck('issuer: database', () => knex.raw('select 1'));
  const stopPurging = startPurging(knex, log, config.ISSUER_PURGE_INTERVAL_S);
  return { url: effective.AUTH_URL, close: async () => (await http.close(), await stopPurging(), redis?.disconnect()) };
}
