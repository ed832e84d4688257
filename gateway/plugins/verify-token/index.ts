// Plugin `verify-token`: the bearer access token, verified locally (contract §5) before anything else looks at it.
//   no credentials → 401 invalid_token, `www-authenticate: Bearer` without an error (RFC 6750 §3.1)
//   malformed or failing token → 401 invalid_token, `Bearer error="invalid_token"`
//   key set unobtainable → 503 token_verification_unavailable with retry-after
import { sendProblem, noteCaller } from '../../../common/http.js';
import { issuerKeySet } from './key-set.js';
import { tokenVerifier } from './verify.js';
import { definePlugin, stateOf } from '../plugin.js';
import { settings } from './schema.js';

// the scheme is case-insensitive (RFC 7235)
const BEARER = /^Bearer +([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+) *$/i;

/** The compact JWS a well-formed `Authorization: Bearer` header carries, or undefined. */
export const bearerToken = (authorization: string | undefined): string | undefined =>
  authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];

export const verifyToken = definePlugin({
  name: 'verify-token',
  settings,
  after: [],
  perRoute: false,
  start(s, env) {
    const keyFor = issuerKeySet(new URL(`${env.authUrl}/.well-known/jwks.json`), s, env.log);
    const verify = tokenVerifier(env.authUrl, { keyFor });
    return {
      handler: () => async (req, res, next) => {
        const authorization = req.get('authorization');
        if (!authorization) {
          res.setHeader('www-authenticate', 'Bearer');
          return sendProblem(res, 'invalid_token', { message: 'the bearer access token is missing' });
        }
        const token = bearerToken(authorization);
        if (!token) return sendProblem(res, 'invalid_token', { message: 'the bearer access token is malformed' });
        const verified = await verify(token);
        if (!verified.ok) {
          env.log.info(
            { requestId: stateOf(res).requestId, reason: verified.error, detail: verified.message },
            'token rejected',
          );
          if (verified.error === 'invalid_token')
            return sendProblem(res, 'invalid_token', { message: 'the access token is not valid' });
          return sendProblem(res, 'token_verification_unavailable', {
            headers: { 'retry-after': String(verified.retryAfterS ?? 1) },
          });
        }
        stateOf(res).claims = verified.value;
        noteCaller(res, { tenant: verified.value.tenant_id, client: verified.value.client_id });
        next();
      },
    };
  },
});
