// Two rate-limit layers, tenant and account (contract §8 rule 1), with rate-limiter-flexible.
// Redis when configured, with an in-process insurance limiter so a Redis outage neither stalls nor opens the gate.
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitPolicy, RateLimitWindow } from '../policies/decision.js';
import type { Logger } from '../common/log.js';

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
  // Fail fast instead of queueing while Redis is away, so the insurance limiter takes over at once.
  const redis = opts.redisUrl
    ? new Redis(opts.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 200, lazyConnect: false })
    : undefined;
  redis?.on('error', (err) => opts.log.warn({ err: err.message }, 'redis error; rate limiting continues in-process'));

  // One limiter per layer and window; a tenant's custom policy simply selects other instances (and keys).
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiter = (layer: 'tenant' | 'account', w: RateLimitWindow) => {
    const keyPrefix = `rl:${layer}:${w.points}:${w.durationS}`;
    let l = limiters.get(keyPrefix);
    if (!l) {
      const memory = new RateLimiterMemory({ keyPrefix, points: w.points, duration: w.durationS });
      l = redis
        ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points: w.points, duration: w.durationS, rejectIfRedisNotReady: true, insuranceLimiter: memory })
        : memory;
      limiters.set(keyPrefix, l);
    }
    return l;
  };

  return {
    async consume(tenantId, accountId, policy) {
      const results = await Promise.allSettled([
        limiter('tenant', policy.tenant).consume(tenantId),
        limiter('account', policy.account).consume(accountId),
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
        retryAfterS: Math.max(1, Math.ceil(msBeforeNext / 1000)),
      };
    },
    async close() {
      redis?.disconnect();
    },
  };
}
