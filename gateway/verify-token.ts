// Local access-token verification (contract §5.2): ES256 signature from the issuer's fixed JWKS URL, iss, aud, typ, exp.
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { TokenClaims } from '../policies/decision.js';

export type Verification =
  | { ok: true; claims: TokenClaims; exp: number }
  | { ok: false; reason: 'invalid_token' | 'token_verification_unavailable'; detail: string };

const REQUIRED_CLAIMS = ['sub', 'client_id', 'tenant_id', 'scope', 'profile', 'exp', 'iat', 'jti'];

/** Errors that mean the key set could not be had, as opposed to a bad token. */
const UNAVAILABLE = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID']);

export function tokenVerifier(authUrl: string) {
  // The key set location is configuration, never taken from the token's `iss`. jose refetches at most once per
  // cooldown for an unknown kid, so random kids cannot amplify traffic against the issuer.
  const jwks = createRemoteJWKSet(new URL(`${authUrl}/.well-known/jwks.json`), { timeoutDuration: 2000, cooldownDuration: 30_000 });

  return async function verify(token: string): Promise<Verification> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: authUrl,
        audience: 'svc-api',
        typ: 'at+jwt',
        algorithms: ['ES256'],
        requiredClaims: REQUIRED_CLAIMS,
      }));
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      if (err instanceof errors.JOSEError && !UNAVAILABLE.has(code)) return { ok: false, reason: 'invalid_token', detail: code };
      return { ok: false, reason: 'token_verification_unavailable', detail: code || String(err) };
    }
    const p = payload as Record<string, unknown>;
    const strings = ['sub', 'client_id', 'tenant_id', 'scope', 'profile'].every((k) => typeof p[k] === 'string');
    const optionalString = (k: string) => p[k] === undefined || typeof p[k] === 'string';
    if (!strings || !optionalString('actor_account_id') || !optionalString('sid') || !(p.actor_epoch === undefined || Number.isInteger(p.actor_epoch)))
      return { ok: false, reason: 'invalid_token', detail: 'claim types' };
    return {
      ok: true,
      exp: payload.exp!,
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
