// The token endpoint answers only the contract's TokenError (§4.1, §7.1): error ∈ {invalid_client, invalid_grant,
// invalid_scope, unsupported_grant_type}, optional error_description, nothing else. oidc-provider's wider vocabulary
// is folded into it here, for its own errors (post-middleware) and the pre-filter's.
import type { ErrorRequestHandler, Response } from 'express';
import type { ParserRefusal } from '../../common/http.js';
import type { Logger } from '../../common/log.js';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { TOKEN_ERROR_CODES, type TokenErrorCode } from '../../wire/codes.js';
import { HashingBusy } from '../../common/secrets.js';
import { routeOf } from '../oidc-route.js';

const CONTRACT_CODES: ReadonlySet<string> = new Set<TokenErrorCode>(TOKEN_ERROR_CODES);
/** invalid_request descriptions oidc-provider uses for problems with client authentication. */
const ABOUT_CLIENT_AUTH = /client authentication|authorization header|client_id|client_secret|client_assertion/i;

/**
 * invalid_request becomes invalid_grant (the request cannot yield a token), or invalid_client when it is about
 * client authentication; invalid_target → invalid_scope; a grant the client may not use → unsupported_grant_type.
 * A DPoP proof that is missing (an app registered with dpop_bound_access_tokens), invalid or replayed
 * (invalid_dpop_proof), or a refresh with another key's proof, is invalid_grant: the request cannot yield a token,
 * and the description says why. use_dpop_nonce cannot occur (no server nonce, docs/decisions.md) and would fold the
 * same way.
 */
function toTokenErrorCode(error: string, description = ''): TokenErrorCode {
  if (CONTRACT_CODES.has(error)) return error as TokenErrorCode;
  if (error === 'invalid_target') return 'invalid_scope';
  if (error === 'unauthorized_client') return 'unsupported_grant_type';
  if (error === 'invalid_dpop_proof' || error === 'use_dpop_nonce') return 'invalid_grant';
  if (error === 'invalid_request') {
    if (/grant type is not allowed/i.test(description)) return 'unsupported_grant_type';
    if (ABOUT_CLIENT_AUTH.test(description)) return 'invalid_client';
  }
  return 'invalid_grant';
}

/** Only a request that used HTTP Basic gets 401 and a Basic challenge (contract §4.1); otherwise 400. */
// A bare `Basic` (Node trims the space after it) is Basic auth with no credentials: still 401 with its challenge.
export const usedBasicAuth = (authorization: string | undefined) => /^basic(\s|$)/i.test(authorization ?? '');

const challenge = (issuer: string, description: string | undefined) =>
  `Basic realm="${issuer}", error="invalid_client"` +
  `${description ? `, error_description="${description.replace(/["\\]/g, '')}"` : ''}`;

export interface TokenErrorBody {
  error: TokenErrorCode;
  error_description?: string;
}

/**
 * A request Node's parser refused before any route saw it (a head over 16 KiB, a malformed length): a 400 TokenError,
 * the only error shape the token and revocation endpoints have (§4.1), whichever path it was for.
 */
export const tokenErrorRefusal: ParserRefusal = () => ({
  status: 400,
  reason: 'Bad Request',
  contentType: 'application/json',
  body: JSON.stringify({ error: 'invalid_grant', error_description: 'malformed request' } satisfies TokenErrorBody),
});

/** The pre-filter's own answers, shaped like oidc-provider's token responses (no-store). */
export function sendTokenError(
  res: Response,
  issuer: string,
  error: TokenErrorCode,
  description: string,
  basic: boolean,
): void {
  const status = error === 'invalid_client' && basic ? 401 : 400;
  res.set({ 'cache-control': 'no-store', pragma: 'no-cache' });
  if (status === 401) res.set('www-authenticate', challenge(issuer, description));
  const body: TokenErrorBody = { error, error_description: description };
  res.status(status).json(body);
}

/**
 * Every "try again later" of the token endpoint is a 429 TokenError with `retry-after` (docs/decisions.md): the
 * contract's token endpoint answers only 200, 400, 401 and 429, and its four codes have none for load or outage, so
 * the body carries `invalid_client`, the closest; clients act on the status and `retry-after`.
 */
const tryLater = (description: string): TokenErrorBody => ({ error: 'invalid_client', error_description: description });
const TRY_LATER_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' };
/** retry-after when the token service itself failed (a database or Redis outage): the API's 503s advise the same. */
const UNAVAILABLE_RETRY_AFTER_S = 1;
const UNAVAILABLE = 'the token service is unavailable just now; retry after the given seconds';

/** 429 from the token endpoint's own limit. */
export function sendTokenRateLimited(res: Response, retryAfterS: number): void {
  res.set({ ...TRY_LATER_HEADERS, 'retry-after': String(retryAfterS) });
  res.status(429).json(tryLater('too many token requests; retry after the given seconds'));
}

/** A koa answer of 429: the client-secret hashing lane was full (common/secrets.ts), or oidc-provider failed. */
function answerTryLater(ctx: KoaContextWithOIDC, retryAfterS: number, description: string): void {
  ctx.status = 429;
  ctx.set({ ...TRY_LATER_HEADERS, 'retry-after': String(retryAfterS) });
  ctx.remove('www-authenticate');
  ctx.body = tryLater(description);
}

/** Routes whose errors are the contract's TokenError: the token endpoint and the revocation endpoint beside it. */
const TOKEN_ERROR_ROUTES: ReadonlySet<string> = new Set(['token', 'revocation']);

/**
 * provider.use post-middleware: rewrites every 4xx from the token and revocation routes into TokenError, dropping
 * non-standard members such as InvalidScope's `scope`; an internal failure (oidc-provider's 500 `server_error`, e.g.
 * its storage is down, or an error thrown by our middleware after it, such as the revocation's family kill) becomes the
 * 429 try-later answer, never a TokenError that would tell the client its grant is bad.
 */
export function tokenErrorRemapper(issuer: string, onFailure: (err: unknown) => void = () => undefined) {
  const onTokenRoute = (ctx: KoaContextWithOIDC) => ctx.method === 'POST' && TOKEN_ERROR_ROUTES.has(routeOf(ctx) ?? '');
  return async (ctx: KoaContextWithOIDC, next: () => Promise<unknown>) => {
    try {
      await next();
    } catch (err) {
      if (!onTokenRoute(ctx)) throw err;
      onFailure(err);
      return answerTryLater(ctx, UNAVAILABLE_RETRY_AFTER_S, UNAVAILABLE);
    }
    if (ctx.state.hashingBusy instanceof HashingBusy) {
      return answerTryLater(
        ctx,
        ctx.state.hashingBusy.retryAfterS,
        'client authentication is busy; retry after the given seconds',
      );
    }
    if (!onTokenRoute(ctx) || ctx.status < 400) return;
    if (ctx.status >= 500) return answerTryLater(ctx, UNAVAILABLE_RETRY_AFTER_S, UNAVAILABLE);
    const out = (typeof ctx.body === 'object' && ctx.body !== null ? ctx.body : {}) as {
      error?: unknown;
      error_description?: unknown;
    };
    const description = typeof out.error_description === 'string' ? out.error_description : undefined;
    const error = toTokenErrorCode(typeof out.error === 'string' ? out.error : '', description);
    const body: TokenErrorBody = { error, ...(description !== undefined ? { error_description: description } : {}) };
    ctx.body = body;
    if (error === 'invalid_client' && usedBasicAuth(ctx.get('authorization'))) {
      ctx.status = 401;
      if (!ctx.response.get('www-authenticate')) ctx.set('www-authenticate', challenge(issuer, description));
    } else {
      ctx.status = 400;
      ctx.remove('www-authenticate');
    }
  };
}

/**
 * The token route's last error handler: a failure of our own middleware (a database or Redis error before
 * oidc-provider runs) gets the 429 try-later answer, never a TokenError that would tell the client its grant is bad.
 * Nothing was issued or consumed.
 */
export const tokenRouteFailed =
  (log: Logger): ErrorRequestHandler =>
  (err, _req, res, _next) => {
    log.error({ err: (err as Error).message }, 'token request failed before oidc-provider');
    res.set({ ...TRY_LATER_HEADERS, 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) });
    res.status(429).json(tryLater(`${UNAVAILABLE}; nothing was issued or consumed`));
  };
