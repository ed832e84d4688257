// The issuer's key set, the only place verification keys come from (contract §5.2): fetched from the configured
// JWKS URL, never from a token's `iss`, `jku`, `x5u`, `jwk` or `x5c`.
//   - A fresh set (younger than cacheMaxAgeS) is used as is; an older one is refreshed in the background and keeps
//     serving while the issuer is down, up to maxStaleS (stale-on-error).
//   - A `kid` missing from a usable set triggers at most one re-fetch per refetchCooldownS, shared by every waiting
//     request (single flight); if the kid is still missing from a set the issuer answered, or no re-fetch may run now
//     after a successful one, it is the token's fault.
//   - Verification is unavailable (503 with retry-after) when no usable set exists at all, or when the re-fetch for
//     a missing kid could not reach the issuer (contract §7.2: "bounded re-fetch for an unknown key id failed").
import { createLocalJWKSet, type JSONWebKeySet, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import type { Logger } from '../../../common/log.js';

export interface KeySetOptions {
  cacheMaxAgeS: number;
  maxStaleS: number;
  refetchCooldownS: number;
  timeoutMs: number;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
}

/** The key id names no key of a recently fetched set: a token fault. */
class UnknownKeyId extends Error {}
/** No usable key set: verification cannot finish. */
export class KeySetUnavailable extends Error {
  constructor(readonly retryAfterS: number) {
    super('issuer key set unavailable');
  }
}

interface Fetched {
  kids: ReadonlySet<string>;
  select: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
}

export function issuerKeySet(jwksUrl: URL, opts: KeySetOptions, log: Logger) {
  const now = opts.now ?? Date.now;
  let current: Fetched | undefined;
  let lastAttempt = -Infinity;
  let lastFetchFailed = false;
  let inflight: Promise<void> | undefined;

  async function fetchSet(): Promise<void> {
    try {
      const res = await fetch(jwksUrl, { signal: AbortSignal.timeout(opts.timeoutMs), redirect: 'error' });
      if (!res.ok) throw new Error(`status ${res.status}`);
      const jwks = (await res.json()) as JSONWebKeySet;
      const select = createLocalJWKSet(jwks); // validates the set's shape
      current = {
        select,
        kids: new Set(jwks.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string')),
        fetchedAt: now(),
      };
      lastFetchFailed = false;
    } catch (err) {
      lastFetchFailed = true;
      log.warn({ err: (err as Error).message }, 'issuer key set fetch failed');
    }
  }
  const cooledDown = () => now() - lastAttempt >= opts.refetchCooldownS * 1000;
  /** One fetch at a time, and none within the cooldown of the last attempt. */
  const refetch = (): Promise<void> | undefined => {
    if (inflight) return inflight;
    if (!cooledDown()) return undefined;
    lastAttempt = now();
    return (inflight = fetchSet().finally(() => (inflight = undefined)));
  };
  const age = () => (current ? now() - current.fetchedAt : Infinity);
  const usable = () => (age() <= opts.maxStaleS * 1000 ? current : undefined);
  const retryAfterS = () => Math.max(1, Math.ceil((lastAttempt + opts.refetchCooldownS * 1000 - now()) / 1000));

  /** An aged set is refreshed in the background while it keeps serving; nothing waits on the refresh. */
  const refreshIfAged = () => {
    if (usable() && age() > opts.cacheMaxAgeS * 1000) void refetch();
  };

  /**
   * The key set in use now, or undefined when none is usable; starts a background refresh of an aged one, as a
   * verification does. A re-fetched set is a new object, so whatever was verified against the old one can tell.
   */
  function inUse(): object | undefined {
    refreshIfAged();
    return usable();
  }

  /** jose's key resolver: the key for this protected header, or UnknownKeyId / KeySetUnavailable. */
  async function keyFor(header: JWSHeaderParameters, token: FlattenedJWSInput) {
    if (!usable()) await refetch();
    else refreshIfAged();
    let set = usable();
    if (!set) throw new KeySetUnavailable(retryAfterS());
    if (!header.kid || !set.kids.has(header.kid)) {
      if (header.kid) await refetch();
      set = usable();
      if (header.kid && lastFetchFailed) throw new KeySetUnavailable(retryAfterS());
      if (!set || !header.kid || !set.kids.has(header.kid)) throw new UnknownKeyId();
    }
    return set.select(header, token);
  }
  return Object.assign(keyFor, { current: inUse });
}
export type IssuerKeySet = ReturnType<typeof issuerKeySet>;
