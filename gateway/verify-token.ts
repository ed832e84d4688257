// Local access-token verification (contract §5.2): ES256 signature from the issuer's fixed JWKS URL, iss, aud, typ, exp.
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { TokenClaims } from '../policies/decision.js';

export type Verification =
  | { ok: true; claims: TokenClaims }
  | { ok: false; reason: 'invalid_token'; detail: string }
  | { ok: false; reason: 'token_verification_unavailable'; detail: string; retryAfterS: number };

const REQUIRED_CLAIMS = ['sub', 'client_id', 'tenant_id', 'scope', 'profile', 'exp', 'iat', 'jti'];
/** The contract's token lifetime bounds a token's age too, so a token minted far ahead of time is refused. */
const MAX_TOKEN_AGE_S = 900;

/** jose errors that are faults of the token itself (401). Every other failure means the key set was not had (503). */
const TOKEN_FAULTS = new Set([
  'ERR_JWS_INVALID', 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'ERR_JWT_INVALID', 'ERR_JWT_EXPIRED',
  'ERR_JWT_CLAIM_VALIDATION_FAILED', 'ERR_JOSE_ALG_NOT_ALLOWED', 'ERR_JOSE_NOT_SUPPORTED', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JWKS_NO_MATCHING_KEY',
]);

export interface VerifierOptions {
  /** Least time between two key-set fetches caused by unknown key ids. */
  cooldownS?: number;
}

export function tokenVerifier(authUrl: string, { cooldownS = 10 }: VerifierOptions = {}) {
  // The key set location is configuration, never taken from the token's `iss`. jose refetches at most once per
  // cooldown for an unknown kid, so random kids cannot amplify traffic against the issuer.
  const jwks = createRemoteJWKSet(new URL(`${authUrl}/.well-known/jwks.json`), { timeoutDuration: 2000, cooldownDuration: cooldownS * 1000 });
  const unavailable = (detail: string, retryAfterS = 1): Verification => ({ ok: false, reason: 'token_verification_unavailable', detail, retryAfterS });

  return async function verify(token: string): Promise<Verification> {
    // Read before verifying: during a cooldown jose does not refetch, so an unknown kid then means "not checked yet".
    const refetchSuppressed = jwks.coolingDown;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: authUrl,
        audience: 'svc-api',
        typ: 'at+jwt',
        algorithms: ['ES256'],
        requiredClaims: REQUIRED_CLAIMS,
        maxTokenAge: MAX_TOKEN_AGE_S,
      }));
    } catch (err) {
      const code = err instanceof errors.JOSEError ? err.code : '';
      // A key the issuer may have just published, while refetching is held back: the bounded re-fetch could not run.
      if (code === 'ERR_JWKS_NO_MATCHING_KEY' && refetchSuppressed) return unavailable('unknown kid during refetch cooldown', cooldownS);
      if (TOKEN_FAULTS.has(code)) return { ok: false, reason: 'invalid_token', detail: code };
      return unavailable(code || String(err));
    }
    const p = payload as Record<string, unknown>;
    // `aud` must equal svc-api (contract §5.2), not merely contain it.
    const strings = ['sub', 'client_id', 'tenant_id', 'scope', 'profile', 'aud'].every((k) => typeof p[k] === 'string');
    const optionalString = (k: string) => p[k] === undefined || typeof p[k] === 'string';
    if (!strings || !optionalString('actor_account_id') || !optionalString('sid') || !(p.actor_epoch === undefined || Number.isInteger(p.actor_epoch)))
      return { ok: false, reason: 'invalid_token', detail: 'claim types' };
    return {
      ok: true,
      claims: {
        sub: p.sub as string,
        client_id: p.client_id as string,
        tenant_id: p.tenant_id as string,
        profile: p.profile as string,
        scope: p.scope as string,
        actor_account_id: p.actor_account_id as string | undefined,
        actor_epoch: p.actor_epoch as number | undefined,
        sid: p.sid as string | undefined,
      },
    };
  };
}
export type TokenVerifier = ReturnType<typeof tokenVerifier>;
