// Tokens already verified, keyed by the exact token string: verifying the same string against the same key set
// gives the same answer until the token's time runs out, so a repeat skips the ES256 check. An entry serves only
// while the key set it was verified against is still the one in use (a re-fetched set, after a rotation or a
// refresh, starts over), and never past the token's exp or its 900 s age limit. Bounded, least recently used first
// out. Only verified tokens are kept; a failing token is checked in full every time.
import { BoundedLru } from '../../../common/bounded-lru.js';
import type { TokenClaims } from '../../../wire/decision.js';

interface Entry {
  claims: TokenClaims;
  keySet: object;
  /** Milliseconds since the epoch after which the entry no longer serves. */
  until: number;
}

export function verifiedTokenCache(maxEntries: number) {
  const entries = new BoundedLru<string, Entry>(maxEntries);
  return {
    get(token: string, keySet: object | undefined, now: number): TokenClaims | undefined {
      const entry = entries.get(token);
      if (!entry) return undefined;
      if (entry.keySet === keySet && now < entry.until) return entry.claims;
      entries.delete(token);
      return undefined;
    },
    set(token: string, keySet: object, claims: TokenClaims, until: number): void {
      entries.set(token, { claims: Object.freeze(claims), keySet, until });
    },
  };
}
