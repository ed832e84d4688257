// The token endpoint answers only the contract's TokenError (§4.1, §7.1): error ∈ {invalid_client, invalid_grant,
// invalid_scope, unsupported_grant_type}, optional error_description, nothing else. oidc-provider's wider vocabulary
// is folded into it here, for its own errors (post-middleware) and the pre-filter's.
import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from '../common/log.js';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { TOKEN_ERROR_CODES, type TokenErrorCode } from '../wire/codes.js';
import { HashingBusy } from '../common/secrets.js';

const CONTRACT_CODES: ReadonlySet<string> = new Set<TokenErrorCode>(TOKEN_ERROR_CODES);
/** invalid_request descriptions oidc-provider uses for problems with client authentication. */
const ABOUT_CLIENT_AUTH = /client authentication|authorization header|client_id|client_secret|client_assertion/i;

/**
 * invalid_request becomes invalid_grant (the request cannot yield a token), or invalid_client when it is about
 * client authentication; invalid_target → invalid_scope; a grant the client may not use → unsupported_grant_type.
 */
export function toTokenErrorCode(error: string, description = ''): TokenErrorCode {
  if (CONTRACT_CODES.has(error)) return error as TokenErrorCode;
  if (error === 'invalid_target') return 'invalid_scope';
  if (error === 'unauthorized_client') return 'unsupported_grant_type';
  if (error === 'invalid_request') {
    if (/grant type is not allowed/i.test(description)) return 'unsupported_grant_type';
    if (ABOUT_CLIENT_AUTH.test(description)) return 'invalid_client';
  }
  return 'invalid_grant';
}

/** Only a request that used HTTP Basic gets 401 and a Basic challenge (contract §4.1); otherwise 400. */
export const usedBasicAuth = (authorization: string | undefined) => /^basic\s/i.test(authorization ?? '');

const challenge = (issuer: string, description: string | undefined) =>
  `Basic realm="${issuer}", error="invalid_client"${description ? `, error_description="${description.replace(/["\\]/g, '')}"` : ''}`;

export interface TokenErrorBody {
  error: TokenErrorCode;
  error_description?: string;
}

/** The pre-filter's own answers, shaped like oidc-provider's token responses (no-store). */
export function sendTokenError(res: Response, issuer: string, error: TokenErrorCode, description: string, basic: boolean): void {
  const status = error === 'invalid_client' && basic ? 401 : 400;
  res.set({ 'cache-control': 'no-store', pragma: 'no-cache' });
  if (status === 401) res.set('www-authenticate', challenge(issuer, description));
  const body: TokenErrorBody = { error, error_description: description };
  res.status(status).json(body);
}

/**
 * 429 from the token endpoint's own limit: a TokenError (contract §4.1) with `invalid_client`, the closest of the
 * four codes (docs/decisions.md); clients act on the status and `retry-after`.
 */
export function sendTokenRateLimited(res: Response, retryAfterS: number): void {
  res.set({ 'cache-control': 'no-store', pragma: 'no-cache', 'retry-after': String(retryAfterS) });
  const body: TokenErrorBody = { error: 'invalid_client', error_description: 'too many token requests; retry after the given seconds' };
  res.status(429).json(body);
}

/**
 * 429 when the client-secret check found its hashing lane full (common/secrets.ts): the contract's token endpoint
 * answers only 200, 400, 401 and 429, and "wait `retry-after` seconds" is what 429 says. The same TokenError as the
 * endpoint's own limit; nothing was issued or consumed.
 */
function answerBusy(ctx: KoaContextWithOIDC, busy: HashingBusy): void {
  ctx.status = 429;
  ctx.set({ 'cache-control': 'no-store', pragma: 'no-cache', 'retry-after': String(busy.retryAfterS) });
  ctx.remove('www-authenticate');
  const body: TokenErrorBody = { error: 'invalid_client', error_description: 'client authentication is busy; retry after the given seconds' };
  ctx.body = body;
}

/** Routes whose errors are the contract's TokenError: the token endpoint and the revocation endpoint beside it. */
const TOKEN_ERROR_ROUTES: ReadonlySet<string> = new Set(['token', 'revocation']);

/**
 * provider.use post-middleware: rewrites every 4xx from the token and revocation routes into TokenError, dropping non-standard
 * members such as InvalidScope's `scope`. 5xx (server_error) is left alone: it is not a client mistake.
 */
export function tokenErrorRemapper(issuer: string) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<unknown>) => {
    await next();
    if (ctx.state.hashingBusy instanceof HashingBusy) return answerBusy(ctx, ctx.state.hashingBusy);
    if (ctx.method !== 'POST' || !TOKEN_ERROR_ROUTES.has(routeOf(ctx) ?? '') || ctx.status < 400 || ctx.status >= 500) return;
    const out = (typeof ctx.body === 'object' && ctx.body !== null ? ctx.body : {}) as { error?: unknown; error_description?: unknown };
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

/** oidc-provider's route name, when the request matched one of its routes. */
export const routeOf = (ctx: KoaContextWithOIDC): string | undefined =>
  (ctx as { oidc?: { route?: string } }).oidc?.route;

/**
 * The token route's last error handler: a failure of our own middleware (a database or Redis error before
 * oidc-provider runs) gets the answer oidc-provider gives its own internal failures, 500 `server_error`
 * (decisions.md), never a TokenError that would tell the client its grant is bad. Nothing was issued or consumed.
 */
export const tokenRouteFailed = (log: Logger): ErrorRequestHandler => (err, _req, res, _next) => {
  log.error({ err: (err as Error).message }, 'token request failed before oidc-provider');
  res.set({ 'cache-control': 'no-store', pragma: 'no-cache' });
  res.status(500).json({ error: 'server_error', error_description: 'the request could not be completed; nothing was issued or consumed' });
};
