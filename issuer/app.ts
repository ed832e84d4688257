// The issuer as one Express app at the root of AUTH_URL: our own routes first (login/consent pages, the token
// request pre-filter), then oidc-provider, which answers 404 for anything it does not know.
import express from 'express';
import type { Knex } from 'knex';
import type Provider from 'oidc-provider';
import type { Config } from '../common/config.js';
import type { Logger } from '../common/log.js';
import { noteCaller, requestId } from '../common/http.js';
import { HashingBusy } from '../common/secrets.js';
import { interactionRoutes } from './interactions.js';
import { cookieKeysFrom, loadSigningKeys } from './keys.js';
import { accountAppsRoutes } from './account-apps.js';
import { ROUTES, createProvider } from './provider.js';
import { noteRoute } from '../common/telemetry.js';
import { tokenEndpointRoutes } from './token-endpoint/index.js';
import { limiterStore, type LimiterStore } from '../common/rate-limit-store.js';
import { credentialThrottle } from '../common/credential-throttle.js';
import type { Telemetry } from '../common/telemetry.js';

export interface IssuerDeps {
  knex: Knex;
  config: Config;
  log: Logger;
  /** Where the token endpoint's limits count; unset = in-process (startIssuer passes the Redis-backed store). */
  limiters?: LimiterStore;
  telemetry: Pick<Telemetry, 'tokensIssued' | 'familyKills' | 'rateLimited'>;
}

export async function createIssuerApp(deps: IssuerDeps): Promise<{ app: express.Express; provider: Provider }> {
  const { knex, config, log, telemetry } = deps;
  const keys = await loadSigningKeys(knex, config);
  const provider = createProvider({
    knex,
    config,
    keys,
    onReplay: (reused) => telemetry.familyKills.inc({ reused }),
    onTokenRouteFailure: (err) => log.error({ err }, 'token or revocation request failed after oidc-provider'),
  });
  provider.on('server_error', (ctx, err) => {
    // A full credential-hashing lane is load, not a fault: the token
    // route answers 429 with retry-after (token-endpoint/errors.ts).
    if (err instanceof HashingBusy) ctx.state.hashingBusy = err;
    else log.error({ err }, 'oidc-provider server error');
  });
  // The request log's client and route for oidc-provider's routes: the client it authenticated or looked up, when
  // any, and the route it matched (Express sees none of its routes).
  provider.use(async (ctx, next) => {
    await next();
    const client = ctx.oidc?.client?.clientId;
    if (client) noteCaller(ctx.res, { client });
    const route = ctx.oidc?.route;
    if (route) noteRoute(ctx.res, ROUTES[route] ?? `oidc:${route}`);
  });
  provider.on('grant.success', (ctx) =>
    telemetry.tokensIssued.inc({ grant_type: String(ctx.oidc.params?.grant_type) }),
  );

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY); // req.ip: the address the sign-in and token endpoint limits count
  app.use(requestId); // every response carries x-request-id (contract §1 rule 6), the issuer's included
  const store = deps.limiters ?? limiterStore(undefined);
  // One sign-in budget for both sign-in forms (the authorize step and connected apps), counted where the token
  // endpoint's limits are (Redis when configured).
  const throttle = credentialThrottle(store, `sign-in:${config.AUTH_URL}`);
  app.use(interactionRoutes({ provider, knex, log, throttle }));
  app.use(accountAppsRoutes({ knex, log, cookieKey: cookieKeysFrom(keys.keys)[0]!, throttle }));
  app.use(tokenEndpointRoutes({ knex, config, log, limiters: store, telemetry }));
  app.use(provider.callback());
  log.debug({ issuer: config.AUTH_URL, kid: keys.signingKid }, 'issuer ready');
  return { app, provider };
}
