// CORS on the token endpoint for browser apps (public clients): an origin gets CORS headers only by the platform's one
// rule for browser apps (common/browser-origins.ts), for a POST with the client the request names. Never
// a wildcard and never Access-Control-Allow-Credentials (public clients send no credentials). oidc-provider would
// otherwise answer every origin's preflight; its headers are removed for any origin this module did not allow.
import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { storableText } from '../../common/db.js';
import { isBrowserAppOrigin } from '../../common/browser-origins.js';
import { routeOf } from '../oidc-route.js';
import { namedClient } from './request-client.js';

const PREFLIGHT_MAX_AGE_S = 600;
/**
 * Headers a browser app may read from a token response: the request id, the limit's wait, and the challenge of a
 * refused proof or client (issue 49: a browser app using DPoP reads it).
 */
const EXPOSED = 'x-request-id, retry-after, www-authenticate';

const originOf = (req: Request) => {
  const origin = req.get('origin');
  return origin && origin !== 'null' && storableText(origin) ? origin : undefined;
};

const allow = (res: Response, origin: string) => {
  res.locals.corsAllowed = true;
  res.vary('Origin');
  res.set('access-control-allow-origin', origin);
};

/** OPTIONS /oauth2/token: a preflight from an origin some browser app registered; any other gets no CORS headers. */
export function tokenPreflight(knex: Knex): RequestHandler {
  return async (req, res) => {
    const origin = originOf(req);
    res.vary('Origin');
    if (origin && req.get('access-control-request-method') === 'POST' && (await isBrowserAppOrigin(knex, origin))) {
      allow(res, origin);
      res.set({
        'access-control-allow-methods': 'POST',
        // DPoP: a browser app's proof of possession (RFC 9449 §4.1) travels in this header.
        'access-control-allow-headers': 'content-type, x-request-id, dpop',
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
      });
    }
    res.status(204).end();
  };
}

/** POST /oauth2/token (after the body is read): CORS headers when the named client registered the request's origin. */
export function tokenResponseCors(knex: Knex): RequestHandler {
  return async (req, res, next) => {
    const origin = originOf(req);
    const clientId = namedClient(req);
    if (origin && clientId && storableText(clientId) && (await isBrowserAppOrigin(knex, origin, clientId))) {
      allow(res, origin);
      res.set('access-control-expose-headers', EXPOSED);
    }
    next();
  };
}

/**
 * provider.use: drops the CORS headers oidc-provider adds on the
 * token and revocation routes unless tokenResponseCors allowed them.
 */
export async function stripUnlistedCors(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
  await next();
  const route = routeOf(ctx);
  if (!['token', 'cors.token', 'revocation', 'cors.revocation'].includes(route ?? '')) return;
  if ((ctx.res as unknown as Response).locals?.corsAllowed) return;
  for (const name of Object.keys(ctx.response.headers))
    if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name);
}
