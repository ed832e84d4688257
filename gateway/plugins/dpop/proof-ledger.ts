// The proofs already used (RFC 9449 §11.1), by key thumbprint and jti, kept while a replay could still pass the iat
// check. Shared by every gateway on Redis (SET NX EX: the first use and the remembering in one round trip, which
// auto-pipelining sends with the limiter's commands); in process without Redis. While Redis fails, the in-process
// ledger answers (docs/decisions.md "DPoP proof replay while Redis is down").
import type { RedisClient } from '../../../common/rate-limit-store.js';

export interface ProofLedger {
  /** True the first time `key` is offered within `ttlS`; false for a replay (or, in process, a full ledger). */
  firstUse(key: string, ttlS: number): Promise<boolean>;
}

/**
 * In process: a Map in insertion order, which is expiry order because every entry lives the same `ttlS`; expired
 * entries are dropped from the front on each use, so memory follows the proofs of the last 2 x iat window. When
 * `maxEntries` live proofs are held, a new one is refused rather than an unexpired one forgotten (a replay must never
 * pass because of load).
 */
export function memoryLedger(maxEntries: number, now: () => number = Date.now): ProofLedger {
  const seen = new Map<string, number>();
  return {
    async firstUse(key, ttlS) {
      const t = now();
      for (const [k, until] of seen) {
        if (until > t) break;
        seen.delete(k);
      }
      if (seen.has(key) || seen.size >= maxEntries) return false;
      seen.set(key, t + ttlS * 1000);
      return true;
    },
  };
}

/** On Redis, answered by `fallback` (and `onError` told) when Redis does not answer. */
export function redisLedger(redis: RedisClient, fallback: ProofLedger, onError: (err: Error) => void): ProofLedger {
  return {
    async firstUse(key, ttlS) {
      try {
        return (await redis.set(`dpop:jti:${key}`, '1', 'EX', ttlS, 'NX')) === 'OK';
      } catch (err) {
        onError(err as Error);
        return fallback.firstUse(key, ttlS);
      }
    },
  };
}
