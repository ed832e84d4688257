// Local access-token verification (contract §5.2): ES256 signature
// with a key of the issuer's key set, iss, aud, typ, exp.
import { errors, jwtVerify, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { visit } from 'jsonc-parser';
import { KeySetUnavailable, type IssuerKeySet } from './key-set.js';
import { verifiedTokenCache } from './verified-tokens.js';
import { TokenClaimsSchema, type TokenClaims } from '../../../wire/decision.js';
import { done, refused, type Outcome } from '../../../wire/outcome.js';

/**
 * The token's claims, or `invalid_token` (message: which check) or `token_verification_unavailable` (with retry-after).
 */
export type Verification = Outcome<TokenClaims, 'invalid_token' | 'token_verification_unavailable'>;
/** A refused token, naming the check that refused it (for the log line, never the answer). */
const invalid = (check: string) => refused('invalid_token', check);

const REQUIRED_CLAIMS = ['sub', 'client_id', 'tenant_id', 'scope', 'profile', 'exp', 'iat', 'jti'];
/** The contract's token lifetime bounds a token's age too, so a token minted far ahead of time is refused. */
const MAX_TOKEN_AGE_S = 900;
/** Our tokens are under 1,500 characters; anything far longer is refused before it is decoded. */
const MAX_TOKEN_CHARS = 8192;
/** The only JOSE header members our issuer writes; key-naming ones (jku, jwk, x5u, x5c) and any other are refused. */
const HEADER_MEMBERS: ReadonlySet<string> = new Set(['alg', 'typ', 'kid']);

/**
 * Whether a JOSE header or claims set (base64url JSON) names a member twice at any level. RFC 7515 §4 and RFC 7519
 * §4 let a parser keep the last duplicate, as JSON.parse does; we refuse them instead, because no token of ours has
 * one and two readers of the same token must never see different claims.
 */
function hasDuplicateMembers(segment: string): boolean {
  const open: Set<string>[] = [];
  let duplicate = false;
  visit(Buffer.from(segment, 'base64url').toString('utf8'), {
    onObjectBegin: () => void open.push(new Set()),
    onObjectProperty: (name) => {
      const names = open.at(-1)!;
      if (names.has(name)) duplicate = true;
      names.add(name);
    },
    onObjectEnd: () => void open.pop(),
  });
  return duplicate;
}

export interface VerifierOptions {
  /** The issuer's key set (key-set.ts); the token's own headers never name where keys come from. */
  keyFor: IssuerKeySet;
  /** How many verified tokens are remembered (verified-tokens.ts). */
  cacheEntries?: number;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
}

export function tokenVerifier(authUrl: string, { keyFor, cacheEntries = 10_000, now = Date.now }: VerifierOptions) {
  const verified = verifiedTokenCache(cacheEntries);
  return async function verify(token: string): Promise<Verification> {
    if (token.length > MAX_TOKEN_CHARS) return invalid('token too long');
    const keySet = keyFor.current();
    const known = verified.get(token, keySet, now());
    if (known) return done(known);
    let payload: JWTPayload;
    let header: JWTHeaderParameters;
    try {
      ({ payload, protectedHeader: header } = await jwtVerify(token, keyFor, {
        currentDate: new Date(now()),
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
      if (err instanceof KeySetUnavailable)
        return refused('token_verification_unavailable', err.message, err.retryAfterS);
      return invalid(err instanceof errors.JOSEError ? err.code : (err as Error).name);
    }
    if (Object.keys(header).some((name) => !HEADER_MEMBERS.has(name))) return invalid('header members');
    // §5.2: `typ` equals at+jwt; jose also takes `application/at+jwt` and any case (RFC 7515's media type rules).
    if (header.typ !== 'at+jwt') return invalid('typ');
    const [headerSegment = '', claimsSegment = ''] = token.split('.');
    if (hasDuplicateMembers(headerSegment) || hasDuplicateMembers(claimsSegment)) return invalid('duplicate members');
    const p = payload as Record<string, unknown>;
    // jose bounds the age by iat; the lifetime too, so a token that says it lives for ever is refused.
    if ((p.exp as number) - (p.iat as number) > MAX_TOKEN_AGE_S) return invalid('lifetime');
    // `aud` must equal svc-api (contract §5.2), not merely contain it; the platform claims are read with the schema
    // the PDP reads them with (extra claims are dropped).
    const parsed = TokenClaimsSchema.safeParse(p);
    if (typeof p.aud !== 'string' || !parsed.success) return invalid('claim types');
    const claims: TokenClaims = parsed.data;
    // Remembered against the set it was verified with: the one in use now, unless a fetch replaced the set in use
    // before (with none before, this verification fetched the one in use now).
    const usedSet = keyFor.current();
    if (usedSet && (keySet === undefined || keySet === usedSet))
      verified.set(
        token,
        usedSet,
        claims,
        Math.min((payload.exp as number) * 1000, ((payload.iat as number) + MAX_TOKEN_AGE_S) * 1000),
      );
    return done(claims);
  };
}
export type TokenVerifier = ReturnType<typeof tokenVerifier>;
