// The token endpoint and the revocation and pushed authorization request endpoints beside it, in front of
// oidc-provider (which issues, revokes and stores pushed requests).
// Each route is one ordered list of named steps, as oidc-provider writes its own actions: the body is read once, CORS
// is decided for the client the form names, the endpoint's own limit is checked, the form is held to the contract's
// fields for its grant, and a failure of any of these gets the token endpoint's try-later answer (errors.ts).
// A request that passes every step falls through to oidc-provider, mounted after this router.
import { Router } from 'express';
import type { Knex } from 'knex';
import type { Config } from '../../common/config.js';
import type { Logger } from '../../common/log.js';
import type { LimiterStore } from '../../common/rate-limit-store.js';
import type { Telemetry } from '../../common/telemetry.js';
import { tokenPreflight, tokenResponseCors } from './cors.js';
import { tokenRouteFailed } from './errors.js';
import { tokenRateLimit } from './rate-limit.js';
import { malformedBody, readTokenBody, tokenRequestFilter } from './request-filter.js';

export interface TokenEndpointDeps {
  knex: Knex;
  config: Config;
  log: Logger;
  limiters: LimiterStore;
  telemetry: Pick<Telemetry, 'rateLimited'>;
}

export function tokenEndpointRoutes({ knex, config, log, limiters, telemetry }: TokenEndpointDeps): Router {
  const windowS = config.TOKEN_RATE_LIMIT_WINDOW_S;
  const limit = tokenRateLimit(
    limiters,
    {
      perClient: { points: config.TOKEN_RATE_LIMIT_PER_CLIENT, durationS: windowS },
      perAddressAndClient: { points: config.TOKEN_RATE_LIMIT_PER_ADDRESS, durationS: windowS },
      perAddress: {
        points: config.TOKEN_RATE_LIMIT_PER_ADDRESS_ALL_CLIENTS ?? 10 * config.TOKEN_RATE_LIMIT_PER_ADDRESS,
        durationS: windowS,
      },
    },
    config.AUTH_URL,
    () => telemetry.rateLimited.inc({ layer: 'token_endpoint' }),
  );
  const cors = tokenResponseCors(knex);
  const failed = tokenRouteFailed(log);

  const router = Router();
  router.options('/oauth2/token', tokenPreflight(knex));
  router.post(
    '/oauth2/token',
    readTokenBody,
    cors,
    limit,
    ...tokenRequestFilter({ issuer: config.AUTH_URL, clientCredentials: config.ISSUER_ENABLE_CLIENT_CREDENTIALS }),
    failed,
  );
  // RFC 7009 revocation: the same CORS and limit (the same counters); oidc-provider checks the form itself.
  router.options('/oauth2/revoke', tokenPreflight(knex));
  router.post('/oauth2/revoke', readTokenBody, cors, limit, malformedBody(config.AUTH_URL), failed);
  // RFC 9126 pushed authorization requests authenticate the client as the token endpoint does, so they spend from the
  // same budgets: a secret or assertion guessed here is a failure like one guessed there.
  router.options('/oauth2/par', tokenPreflight(knex));
  router.post('/oauth2/par', readTokenBody, cors, limit, malformedBody(config.AUTH_URL), failed);
  return router;
}
