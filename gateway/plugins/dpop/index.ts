// Plugin `dpop`: sender-constrained access tokens (RFC 9449 §7). A token bound to a key (cnf.jkt) is accepted only
// as `Authorization: DPoP <token>` with exactly one valid `DPoP` proof of that key for this very request (proof.ts),
// never seen before (proof-ledger.ts). A bearer token (no cnf) passes untouched; the DPoP scheme with one is refused.
// Every refusal is the contract's single 401 code, invalid_token, with the contract's Bearer challenge first and
// RFC 9449's DPoP challenge (§7.1) after it, which says why (docs/decisions.md "DPoP refusals"):
//   WWW-Authenticate: Bearer error="invalid_token", DPoP error="invalid_dpop_proof" | "invalid_token",
//                     error_description="...", algs="ES256 ..."
import type { Request, Response } from 'express';
import { sendProblem } from '../../../common/http.js';
import { definePlugin, stateOf } from '../plugin.js';
import { settings } from './schema.js';
import { accessTokenHash, proofChecker } from './proof.js';
import { memoryLedger, redisLedger } from './proof-ledger.js';

type ChallengeError = 'invalid_dpop_proof' | 'invalid_token';

/**
 * The values of the request's DPoP headers, one per header line, read from the raw list: `req.headersDistinct` would
 * build every header's list again for this one name.
 */
function dpopHeaders(raw: string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'dpop') values.push(raw[i + 1]!);
  return values;
}

export const dpop = definePlugin({
  name: 'dpop',
  settings,
  after: ['verify-token'],
  perRoute: false,
  start(s, env) {
    const check = proofChecker(s);
    const inProcess = memoryLedger(s.memoryMaxEntries);
    const ledger = env.redis
      ? redisLedger(env.redis, inProcess, (err) => {
          env.telemetry.redisErrors.inc();
          env.log.warn({ err: err.message }, 'redis unavailable; DPoP proofs remembered in-process');
        })
      : inProcess;
    const algs = s.algs.join(' ');
    /**
     * The ath of a token, by the claims verify-token gave for it: a token verified before comes with the same claims
     * object, so its hash is taken once, not on every request (a fresh verification gives a new object: a miss).
     */
    const athOf = new WeakMap<object, { token: string; ath: string }>();
    const athFor = (claims: object, token: string) => {
      const known = athOf.get(claims);
      if (known?.token === token) return known.ath;
      const ath = accessTokenHash(token);
      athOf.set(claims, { token, ath });
      return ath;
    };
    // A proof stays acceptable while its iat is within the window of the clock, so at most 2 windows after it is seen.
    const keepS = 2 * s.iatWindowS;

    const refuse = (res: Response, error: ChallengeError, description: string) => {
      env.log.info({ requestId: stateOf(res).requestId, reason: description }, 'DPoP refused');
      sendProblem(res, 'invalid_token', {
        message: error === 'invalid_token' ? 'the access token is not valid' : 'the DPoP proof is not valid',
        headers: {
          'www-authenticate':
            `Bearer error="invalid_token", ` +
            `DPoP error="${error}", error_description="${description}", algs="${algs}"`,
        },
      });
    };
    /**
     * The request's URL as callers address it: the public base URL and the path, without the query. Never from the
     * request's Host or X-Forwarded-* headers, which the caller writes; with no base URL known, no htu can match.
     */
    const requestUrl = (req: Request) =>
      `${s.publicBaseUrl ?? env.publicUrl?.() ?? ''}${req.originalUrl.split('?')[0]}`;

    return {
      handler: () => async (req, res, next) => {
        const state = stateOf(res);
        const jkt = state.claims!.cnf?.jkt;
        if (!jkt) {
          if (state.credential?.scheme === 'dpop')
            return refuse(res, 'invalid_token', 'the DPoP scheme is for DPoP-bound tokens; send this one as Bearer');
          return next();
        }
        if (state.credential?.scheme !== 'dpop')
          return refuse(res, 'invalid_token', 'a DPoP-bound token must be sent with the DPoP scheme');
        const proofs = dpopHeaders(req.rawHeaders);
        if (proofs.length !== 1) return refuse(res, 'invalid_dpop_proof', 'send exactly one DPoP header');
        const checked = await check({
          proof: proofs[0]!,
          method: req.method,
          url: requestUrl(req),
          token: state.credential.token,
          ath: athFor(state.claims!, state.credential.token),
          jkt,
          nowS: Math.floor(Date.now() / 1000),
        });
        if (!checked.ok) return refuse(res, 'invalid_dpop_proof', checked.reason);
        if (!(await ledger.firstUse(`${jkt}:${checked.jti}`, keepS)))
          return refuse(res, 'invalid_dpop_proof', 'proof already used; sign a new one for each request');
        next();
      },
    };
  },
});
