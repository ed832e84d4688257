// One DPoP proof checked against the request it came with (RFC 9449 §4.3, §7.1), with jose: the JWS is verified
// with the public key in its own header (EmbeddedJWK refuses a private one), by an algorithm of the allow-list, with
// typ dpop+jwt; then the key's thumbprint must be the token's cnf.jkt, htm and htu the request's method and URL
// (without query and fragment), ath the hash of the token, iat inside the window. Replay (jti) is the ledger's job.
// An app signs every proof with the same key and header, so the key EmbeddedJWK imported from a header, and its
// thumbprint, are remembered by the header's exact text once a proof with it passed every check (importing the JWK
// and hashing it were a third of a proof's cost); the signature and every claim are still checked on each proof.
import { createHash } from 'node:crypto';
import { BoundedLru } from '../../../common/bounded-lru.js';
import {
  EmbeddedJWK,
  calculateJwkThumbprint,
  errors,
  jwtVerify,
  type CryptoKey,
  type FlattenedJWSInput,
  type JWK,
  type JWSHeaderParameters,
} from 'jose';
import type { DpopSettings } from './schema.js';

export interface ProofRequest {
  proof: string;
  method: string;
  /** The URL the caller addressed, as the gateway's public base URL makes it (no query). */
  url: string;
  token: string;
  /** The token's hash when the caller has it already; else taken here. */
  ath?: string;
  jkt: string;
  nowS: number;
}

/** A checked proof: its jti, for the ledger; or why it is refused (for the challenge's error_description). */
export type ProofCheck = { ok: true; jti: string } | { ok: false; reason: string };

const MAX_JTI_CHARS = 256;
const fail = (reason: string): ProofCheck => ({ ok: false, reason });

/** The URL as RFC 9449 §4.3 compares it: parsed (so equivalent spellings match), without query and fragment. */
function parsedForComparison(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return undefined;
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

/** base64url(SHA-256(token)), the ath a proof must carry for this token (RFC 9449 §4.2). */
export const accessTokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A public key EmbeddedJWK imported from a proof header, and the thumbprint of that header's JWK. */
interface KnownKey {
  key: CryptoKey;
  thumbprint: string;
}

/** How many proof keys a gateway remembers (each a few hundred bytes); an app's keys are one entry each. */
export const KNOWN_KEYS = 10_000;
const COMPARABLE_URLS = 1000;

export function proofChecker(
  s: Pick<DpopSettings, 'algs' | 'iatWindowS' | 'maxProofChars'>,
  keyEntries: number = KNOWN_KEYS,
) {
  const algorithms = [...s.algs];
  // Keys by the exact protected header (base64url) they came in: the same text parses to the same header, which
  // EmbeddedJWK turns into the same key, so a remembered one is what a fresh import would give. Only headers of proofs
  // that passed every check are kept, so a caller without a token bound to a key cannot fill it.
  const keys = new BoundedLru<string, KnownKey>(keyEntries);
  // The request URLs and htu values seen, as comparable() made them ('' for none): a gateway's routes and an app's htu
  // repeat, and parsing both on every request cost two URL parses.
  const urls = new BoundedLru<string, string>(COMPARABLE_URLS);
  const comparable = (url: string): string | undefined => {
    let value = urls.get(url);
    if (value === undefined) urls.set(url, (value = parsedForComparison(url) ?? ''));
    return value || undefined;
  };
  return async function check(r: ProofRequest): Promise<ProofCheck> {
    if (r.proof.length > s.maxProofChars) return fail('proof too long');
    let payload: Record<string, unknown>;
    let jwk: JWK;
    // The header's text and what it gave: a remembered key, or the one EmbeddedJWK imports now.
    let header = '';
    let known: KnownKey | undefined;
    let imported: CryptoKey | undefined;
    const keyOf = async (protectedHeader: JWSHeaderParameters, jws: FlattenedJWSInput) => {
      header = jws.protected ?? '';
      known = keys.get(header);
      if (known) return known.key;
      return (imported = (await EmbeddedJWK(protectedHeader, jws)) as CryptoKey);
    };
    try {
      const verified = await jwtVerify(r.proof, keyOf, {
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
    const thumbprint = known?.thumbprint ?? (await calculateJwkThumbprint(jwk, 'sha256'));
    if (thumbprint !== r.jkt) return fail('proof key is not the token key');
    const { jti, htm, htu, iat, ath } = payload;
    if (typeof jti !== 'string' || !jti || jti.length > MAX_JTI_CHARS) return fail('jti');
    if (htm !== r.method) return fail('htm');
    const expected = comparable(r.url);
    if (!expected || typeof htu !== 'string' || comparable(htu) !== expected) return fail('htu');
    if (ath !== (r.ath ?? accessTokenHash(r.token))) return fail('ath');
    if (typeof iat !== 'number' || Math.abs(r.nowS - iat) > s.iatWindowS) return fail('iat');
    if (!known && imported && header) keys.set(header, { key: imported, thumbprint });
    return { ok: true, jti };
  };
}
