// Plugin `verify-token`: the bearer access token, verified locally (contract §5) before anything else looks at it.
//   no credentials → 401 invalid_token, `www-authenticate: Bearer` without an error (RFC 6750 §3.1)
//   malformed or failing token → 401 invalid_token, `Bearer error="invalid_token"`
//   key set unobtainable → 503 token_verification_unavailable with retry-after
//   a valid token of a profile v1 does not serve → 403 profile_not_supported (§5.2)
// `Authorization: DPoP <token>` (RFC 9449 §7.1) is read the same way; the dpop plugin, later in the file, checks the
// proof and that the scheme matches the token. A gateway file without that plugin refuses the DPoP scheme and every
// DPoP-bound token here, since nothing would check their proofs.
import { sendProblem, noteCaller } from '../../../common/http.js';
import { V1_PROFILES } from '../../../wire/decision.js';
import { issuerKeySet } from './key-set.js';
import { tokenVerifier } from './verify.js';
import { definePlugin, stateOf, type RequestState } from '../plugin.js';
import { settings } from './schema.js';

// the scheme is case-insensitive (RFC 7235)
const CREDENTIAL = /^(Bearer|DPoP) +([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+) *$/i;

/** The scheme and compact JWS of a well-formed `Authorization: Bearer` or `DPoP` header, or undefined. */
export function presentedToken(authorization: string | undefined): NonNullable<RequestState['credential']> | undefined {
  const match = authorization === undefined ? undefined : CREDENTIAL.exec(authorization);
  if (!match) return undefined;
  return { scheme: match[1]!.toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token: match[2]! };
}

export const verifyToken = definePlugin({
  name: 'verify-token',
  settings,
  after: [],
  perRoute: false,
  start(s, env) {
    const keyFor = issuerKeySet(new URL(`${env.authUrl}/.well-known/jwks.json`), s, env.log);
    const verify = tokenVerifier(env.authUrl, { keyFor });
    // Without an explicit list (a plugin started on its own), assume the shipped file, which lists dpop.
    const proofsChecked = env.listedPlugins?.has('dpop') ?? true;
    return {
      handler: () => async (req, res, next) => {
        const authorization = req.get('authorization');
        if (!authorization) {
          res.setHeader('www-authenticate', 'Bearer');
          return sendProblem(res, 'invalid_token', { message: 'the bearer access token is missing' });
        }
        const credential = presentedToken(authorization);
        if (!credential) return sendProblem(res, 'invalid_token', { message: 'the bearer access token is malformed' });
        const verified = await verify(credential.token);
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
        if (!proofsChecked && (credential.scheme === 'dpop' || verified.value.cnf))
          return sendProblem(res, 'invalid_token', { message: 'this gateway does not accept DPoP-bound tokens' });
        // A valid token of a profile v1 does not serve: denied from the token alone, whether or not the PDP is up.
        if (!V1_PROFILES.has(verified.value.profile)) {
          env.log.info(
            { requestId: stateOf(res).requestId, code: 'profile_not_supported', check: 'profile' },
            'denied',
          );
          return sendProblem(res, 'profile_not_supported');
        }
        stateOf(res).claims = verified.value;
        stateOf(res).credential = credential;
        noteCaller(res, { tenant: verified.value.tenant_id, client: verified.value.client_id });
        next();
      },
    };
  },
});
