// One DPoP proof checked against the request it came with (RFC 9449 §4.3, §7.1), with jose: the JWS is verified
// with the public key in its own header (EmbeddedJWK refuses a private one), by an algorithm of the allow-list, with
// typ dpop+jwt; then the key's thumbprint must be the token's cnf.jkt, htm and htu the request's method and URL
// (without query and fragment), ath the hash of the token, iat inside the window. Replay (jti) is the ledger's job.
import { createHash } from 'node:crypto';
import { EmbeddedJWK, calculateJwkThumbprint, errors, jwtVerify, type JWK } from 'jose';
import type { DpopSettings } from './schema.js';

export interface ProofRequest {
  proof: string;
  method: string;
  /** The URL the caller addressed, as the gateway's public base URL makes it (no query). */
  url: string;
  token: string;
  jkt: string;
  nowS: number;
}

/** A checked proof: its jti, for the ledger; or why it is refused (for the challenge's error_description). */
export type ProofCheck = { ok: true; jti: string } | { ok: false; reason: string };

const MAX_JTI_CHARS = 256;
const fail = (reason: string): ProofCheck => ({ ok: false, reason });

/** The URL as RFC 9449 §4.3 compares it: parsed (so equivalent spellings match), without query and fragment. */
function comparable(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return undefined;
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

/** base64url(SHA-256(token)), the ath a proof must carry for this token (RFC 9449 §4.2). */
export const accessTokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');

export function proofChecker(s: Pick<DpopSettings, 'algs' | 'iatWindowS' | 'maxProofChars'>) {
  const algorithms = [...s.algs];
  return async function check(r: ProofRequest): Promise<ProofCheck> {
    if (r.proof.length > s.maxProofChars) return fail('proof too long');
    let payload: Record<string, unknown>;
    let jwk: JWK;
    try {
      const verified = await jwtVerify(r.proof, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms,
        requiredClaims: ['jti', 'htm', 'htu', 'iat', 'ath'],
        currentDate: new Date(r.nowS * 1000),
      });
      payload = verified.payload as Record<string, unknown>;
      jwk = verified.protectedHeader.jwk!;
    } catch (err) {
      return fail(err instanceof errors.JOSEError ? `proof ${err.code}` : 'proof malformed');
    }
    if ((await calculateJwkThumbprint(jwk, 'sha256')) !== r.jkt) return fail('proof key is not the token key');
    const { jti, htm, htu, iat, ath } = payload;
    if (typeof jti !== 'string' || !jti || jti.length > MAX_JTI_CHARS) return fail('jti');
    if (htm !== r.method) return fail('htm');
    const expected = comparable(r.url);
    if (!expected || typeof htu !== 'string' || comparable(htu) !== expected) return fail('htu');
    if (ath !== accessTokenHash(r.token)) return fail('ath');
    if (typeof iat !== 'number' || Math.abs(r.nowS - iat) > s.iatWindowS) return fail('iat');
    return { ok: true, jti };
  };
}
