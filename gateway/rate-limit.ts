// Two rate-limit layers, tenant and account (contract §8 rule 1), on the shared limiter store (common/).
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitPolicy } from '../policies/decision.js';
import type { Logger } from '../common/log.js';
import { limiterStore, retryAfterSeconds } from '../common/rate-limit-store.js';

export interface LimitResult {
  allowed: boolean;
  /** The stricter of the two layers. */
  remaining: number;
  retryAfterS: number;
}

export interface RateLimiter {
  consume(tenantId: string, accountId: string, policy: RateLimitPolicy): Promise<LimitResult>;
  close(): Promise<void>;
}

export function createRateLimiter(opts: { redisUrl?: string | undefined; log: Logger }): RateLimiter {
  // One limiter per layer and window; a tenant's custom policy simply selects other instances (and keys).
  const store = limiterStore(opts);
  return {
    async consume(tenantId, accountId, policy) {
      const results = await Promise.allSettled([
        store.limiter('tenant', policy.tenant).consume(tenantId),
        store.limiter('account', policy.account).consume(accountId),
      ]);
      const res = results.map((r) => {
        const value = r.status === 'fulfilled' ? r.value : r.reason;
        if (!(value instanceof RateLimiterRes)) throw value; // a store failure with no insurance left
        return { rejected: r.status === 'rejected', value };
      });
      const rejected = res.filter((r) => r.rejected);
      const msBeforeNext = rejected.length ? Math.max(...rejected.map((r) => r.value.msBeforeNext)) : 0;
      return {
        allowed: rejected.length === 0,
        remaining: Math.max(0, Math.min(...res.map((r) => r.value.remainingPoints))),
        retryAfterS: retryAfterSeconds(msBeforeNext),
      };
    },
    close: () => store.close(),
  };
}
