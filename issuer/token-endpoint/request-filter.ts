// Express pre-filter for POST /oauth2/token: what oidc-provider is lenient about and the contract (§4.1) is not.
// Unlisted form fields are rejected (oidc-provider drops them silently), the grant must be one this deployment
// offers, a client authenticates one way only, and code_verifier has the RFC 7636 shape.
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import { sendTokenError, usedBasicAuth } from './errors.js';

/**
 * Contract §4.1 allow-lists, required and optional fields together, plus RFC 7523's client assertion for the apps
 * registered with private_key_jwt (issue 49); oidc-provider refuses an assertion from any other app.
 */
const ASSERTION = ['client_assertion', 'client_assertion_type'];
const FIELDS: Record<string, ReadonlySet<string>> = {
  client_credentials: new Set(['grant_type', 'client_id', 'client_secret', 'scope', ...ASSERTION]),
  authorization_code: new Set([
    'grant_type',
    'client_id',
    'code',
    'code_verifier',
    'redirect_uri',
    'client_secret',
    ...ASSERTION,
  ]),
  refresh_token: new Set(['grant_type', 'client_id', 'refresh_token', 'client_secret', 'scope', ...ASSERTION]),
};
const CLIENT_AUTH_FIELDS = new Set(['client_id', 'client_secret', ...ASSERTION]);
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

const FORM = 'application/x-www-form-urlencoded';

/** Reads the form as text; later middleware sees the same string (body-parser reads a request once). */
export const readTokenBody = express.text({ type: FORM, limit: '56kb' });

/** Whether the request carries body bytes (chunked, or a length above zero), whatever its content type says. */
const sentBody = (req: Request) =>
  req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? 0) > 0;

/**
 * body-parser's refusals of the request itself carry a 4xx status: a `type` such as entity.too.large or
 * charset.unsupported, or the zlib or brotli error of a body whose content-encoding does not decode.
 */
const isBodyError = (err: unknown) => {
  const status = (err as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
};

export interface TokenFilterOptions {
  issuer: string;
  clientCredentials: boolean;
}

/**
 * The body is read as text and handed on untouched: oidc-provider parses req.body itself when the stream was already
 * consumed, so both sides see the same form.
 */
export function tokenRequestFilter({
  issuer,
  clientCredentials,
}: TokenFilterOptions): (RequestHandler | ErrorRequestHandler)[] {
  const enabled = new Set([
    'authorization_code',
    'refresh_token',
    ...(clientCredentials ? ['client_credentials'] : []),
  ]);

  const check: RequestHandler = (req, res, next) => {
    const basic = usedBasicAuth(req.get('authorization'));
    const fail = (error: Parameters<typeof sendTokenError>[2], description: string) =>
      sendTokenError(res, issuer, error, description, basic);

    // No string body: either another content type (or none named for a body that was sent), or no body at all (then
    // grant_type is simply missing).
    if (typeof req.body !== 'string' && (req.get('content-type') || sentBody(req)) && !req.is(FORM))
      return fail('invalid_grant', 'the request body must be application/x-www-form-urlencoded');
    const form = new URLSearchParams(typeof req.body === 'string' ? req.body : '');
    const grantTypes = form.getAll('grant_type');
    if (grantTypes.length === 0 || !grantTypes[0]) return fail('unsupported_grant_type', 'grant_type is required');
    if (grantTypes.length > 1) return fail('invalid_grant', 'grant_type must not be provided twice');
    const grantType = grantTypes[0];
    // A grant this deployment does not offer (unknown, or known but switched off) is unsupported either way.
    if (!enabled.has(grantType)) return fail('unsupported_grant_type', 'unsupported grant_type');

    const allowed = FIELDS[grantType]!;
    const seen = new Set<string>();
    for (const name of form.keys()) {
      if (!allowed.has(name))
        return fail('invalid_grant', `parameter not allowed for ${grantType}: ${name.slice(0, 64)}`);
      if (seen.has(name))
        return fail(
          CLIENT_AUTH_FIELDS.has(name) ? 'invalid_client' : 'invalid_grant',
          `${name} must not be provided twice`,
        );
      seen.add(name);
    }
    // RFC 7521 §4.2: an assertion and its type go together; one alone authenticates nothing, and oidc-provider would
    // pass it over silently.
    if (form.has('client_assertion') !== form.has('client_assertion_type'))
      return fail('invalid_client', 'client_assertion and client_assertion_type are sent together or not at all');
    // An empty secret is not "no secret": public clients send none at all, confidential ones a real one (§4.1).
    if (form.get('client_secret') === '') return fail('invalid_client', 'client_secret must not be empty');
    if (req.get('authorization') !== undefined && form.has('client_secret'))
      return fail('invalid_client', 'client authentication must use either HTTP Basic or client_secret, not both');

    // A comma-separated scope is a client mistake the contract names (§4.1), not one unknown scope to drop silently.
    if (form.get('scope')?.includes(','))
      return fail('invalid_scope', 'scope is a space-separated list, not comma-separated');

    const verifier = form.get('code_verifier');
    if (verifier !== null && !CODE_VERIFIER.test(verifier))
      return fail('invalid_grant', 'code_verifier must be 43 to 128 characters of [A-Za-z0-9._~-]');

    next();
  };

  return [readTokenBody, check, malformedBody(issuer)];
}

/**
 * Body parser failures (too large, bad charset, an encoding that does not decode) are still answered as TokenError,
 * never as an HTML page or a retryable 429; any other error (a store that failed) is not the client's and goes on to
 * the route's last handler.
 */
export const malformedBody =
  (issuer: string): ErrorRequestHandler =>
  (err, req, res, next) =>
    isBodyError(err)
      ? sendTokenError(res, issuer, 'invalid_grant', 'malformed request body', usedBasicAuth(req.get('authorization')))
      : next(err);
