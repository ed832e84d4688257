// The issuer as one Express app at the root of AUTH_URL: our own routes first (login/consent pages, the token
// request pre-filter), then oidc-provider, which answers 404 for anything it does not know.
import express from 'express';
import type { Knex } from 'knex';
import type Provider from 'oidc-provider';
import type { Config } from '../common/config.js';
import type { Logger } from '../common/log.js';
import { requestId } from '../common/http.js';
import { interactionRoutes } from './interactions.js';
import { loadSigningKeys } from './keys.js';
import { createProvider } from './provider.js';
import { readTokenBody, tokenRequestFilter } from './token-request-filter.js';
import { tokenRateLimit } from './token-rate-limit.js';
import { tokenPreflight, tokenResponseCors } from './token-cors.js';
import { limiterStore, type LimiterStore } from '../common/rate-limit-store.js';

export interface IssuerDeps {
  knex: Knex;
  config: Config;
  log: Logger;
  /** Where the token endpoint's limits count; unset = in-process (startIssuer passes the Redis-backed store). */
  limiters?: LimiterStore;
}

export async function createIssuerApp(deps: IssuerDeps): Promise<{ app: express.Express; provider: Provider }> {
  const { knex, config, log } = deps;
  const keys = await loadSigningKeys(knex, config);
  const provider = createProvider({ knex, config, keys });
  provider.on('server_error', (_ctx, err) => log.error({ err }, 'oidc-provider server error'));

  const app = express();
  app.disable('x-powered-by');
  app.use(requestId); // every response carries x-request-id (contract §1 rule 6), the issuer's included
  app.use(interactionRoutes({ provider, knex, log }));
  const limits = {
    perClient: { points: config.TOKEN_RATE_LIMIT_PER_CLIENT, durationS: config.TOKEN_RATE_LIMIT_WINDOW_S },
    perAddress: { points: config.TOKEN_RATE_LIMIT_PER_ADDRESS, durationS: config.TOKEN_RATE_LIMIT_WINDOW_S },
  };
  app.options('/oauth2/token', tokenPreflight(knex));
  app.post(
    '/oauth2/token',
    readTokenBody,
    tokenResponseCors(knex),
    tokenRateLimit(deps.limiters ?? limiterStore(undefined), limits, config.AUTH_URL),
    ...tokenRequestFilter({ issuer: config.AUTH_URL, clientCredentials: config.ISSUER_ENABLE_CLIENT_CREDENTIALS }),
  );
  app.use(provider.callback());
  log.debug({ issuer: config.AUTH_URL, kid: keys.signingKid }, 'issuer ready');
  return { app, provider };
}
