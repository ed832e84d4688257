// Plugin `cors`: browser apps (public clients) calling the API from their registered origins.
// An origin is allowed when the file lists it, or by the platform's one rule for browser apps
// (common/browser-origins.ts) applied to the client named by the presented token. The token is verified later in the
// chain, before any data is answered, so reading the client id early only decides which origin may read the answer
// to that very token.
// Preflight (OPTIONS) is answered per route (app.ts picks the route by the requested method); an origin that is not
// allowed gets the same 404 as any OPTIONS probe.
import { decodeJwt } from 'jose';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { sendProblem } from '../../../common/http.js';
import { isBrowserAppOrigin } from '../../../common/browser-origins.js';
import { definePlugin } from '../plugin.js';
import { settings } from './schema.js';
import { presentedToken } from '../verify-token/index.js';

// www-authenticate: a browser app reads why its token or DPoP proof was refused (RFC 9449 §7.1); dpop: its proof.
const EXPOSED = 'etag, location, x-request-id, x-ratelimit-remaining, retry-after, www-authenticate';
const ALLOWED_REQUEST_HEADERS = 'authorization, content-type, dpop, if-match, if-none-match, x-request-id';
type Settings = z.output<typeof settings>;

const tokenClientId = (req: Request): string | undefined => {
  const token = presentedToken(req.get('authorization'))?.token;
  try {
    const clientId = token ? decodeJwt(token).client_id : undefined;
    return typeof clientId === 'string' ? clientId : undefined;
  } catch {
    return undefined;
  }
};

export const cors = definePlugin({
  name: 'cors',
  settings,
  after: ['request-id'],
  perRoute: true,
  start(_global, env) {
    // A database that cannot answer allows no registered origin: CORS decides who may read an answer, never what it is,
    // so the request goes on to its own answer (401 without a valid token, 503 from the PDP), not to this lookup's 503.
    const registered = (origin: string, clientId: string | undefined) =>
      isBrowserAppOrigin(env.knex, origin, clientId).catch((err: unknown) => {
        env.log.warn({ err: (err as Error).message }, 'CORS origin lookup failed; origin not allowed');
        return false;
      });
    const allowed = async (s: Settings, origin: string, clientId: string | undefined) =>
      s.origins.includes(origin) || (s.clientOrigins && (await registered(origin, clientId)));
    const allowOrigin = (res: Response, origin: string) => {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-expose-headers', EXPOSED);
    };
    return {
      handler: (_route, s) => async (req, res, next) => {
        res.vary('origin');
        const origin = req.get('origin');
        if (origin && (await allowed(s, origin, tokenClientId(req)))) allowOrigin(res, origin);
        next();
      },
      preflight: (route, s) => async (req, res) => {
        res.vary('origin');
        const origin = req.get('origin');
        if (!origin || !(await allowed(s, origin, undefined))) return sendProblem(res, 'not_found');
        allowOrigin(res, origin);
        res.setHeader('access-control-allow-methods', route.method);
        res.setHeader('access-control-allow-headers', ALLOWED_REQUEST_HEADERS);
        res.setHeader('access-control-max-age', String(s.maxAgeS));
        res.status(204).end();
      },
    };
  },
});
