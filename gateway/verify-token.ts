// Local access-token verification (contract §5.2): ES256 signature with a key of the issuer's key set, iss, aud, typ, exp.
import { errors, jwtVerify, type JWTPayload } from 'jose';
import { KeySetUnavailable, type IssuerKeySet } from './key-set.js';
import type { TokenClaims } from '../policies/decision.js';

export type Verification =
  | { ok: true; claims: TokenClaims }
  | { ok: false; reason: 'invalid_token'; detail: string }
  | { ok: false; reason: 'token_verification_unavailable'; detail: string; retryAfterS: number };

const REQUIRED_CLAIMS = ['sub', 'client_id', 'tenant_id', 'scope', 'profile', 'exp', 'iat', 'jti'];
/** The contract's token lifetime bounds a token's age too, so a token minted far ahead of time is refused. */
const MAX_TOKEN_AGE_S = 900;

export interface VerifierOptions {
  /** The issuer's key set (key-set.ts); the token's own headers never name where keys come from. */
  keyFor: IssuerKeySet;
}

export function tokenVerifier(authUrl: string, { keyFor }: VerifierOptions) {
  return async function verify(token: string): Promise<Verification> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keyFor, {
        issuer: authUrl,
        audience: 'svc-api',
        typ: 'at+jwt',
        algorithms: ['ES256'],
        requiredClaims: REQUIRED_CLAIMS,
        maxTokenAge: MAX_TOKEN_AGE_S,
      }));
    } catch (err) {
      // Only a key set that cannot be had is the platform's fault; everything else (shape, algorithm, unknown key id,
      // signature, claims) is the token's, so a forged token is never a 503.
      if (err instanceof KeySetUnavailable) return { ok: false, reason: 'token_verification_unavailable', detail: err.message, retryAfterS: err.retryAfterS };
      return { ok: false, reason: 'invalid_token', detail: err instanceof errors.JOSEError ? err.code : (err as Error).name };
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
