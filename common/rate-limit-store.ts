// Fixed-window limiters from rate-limiter-flexible, one per (name, window): Redis when configured, with an in-process
// insurance limiter so a Redis outage neither stalls nor opens the gate; in-process only without Redis. Shared by the
// gateway's API layers and the issuer's token endpoint limit.
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from './log.js';

export interface Window {
  points: number;
  durationS: number;
}

export interface LimiterStore {
  /** The limiter for `name` with this window; the same instance (and keys) for the same arguments. */
  limiter(name: string, window: Window): RateLimiterAbstract;
  close(): Promise<void>;
}

export function limiterStore(opts: { redisUrl?: string | undefined; log: Logger }): LimiterStore {
  // Fail fast instead of queueing while Redis is away, so the insurance limiter takes over at once.
  const redis = opts.redisUrl
    ? new Redis(opts.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 200, lazyConnect: false })
    : undefined;
  redis?.on('error', (err) => opts.log.warn({ err: err.message }, 'redis error; rate limiting continues in-process'));

  const limiters = new Map<string, RateLimiterAbstract>();
  return {
    limiter(name, w) {
      const keyPrefix = `rl:${name}:${w.points}:${w.durationS}`;
      let l = limiters.get(keyPrefix);
      if (!l) {
        const memory = new RateLimiterMemory({ keyPrefix, points: w.points, duration: w.durationS });
        l = redis
          ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points: w.points, duration: w.durationS, rejectIfRedisNotReady: true, insuranceLimiter: memory })
          : memory;
        limiters.set(keyPrefix, l);
      }
      return l;
    },
    async close() {
      redis?.disconnect();
    },
  };
}

/** Seconds a refused caller should wait: an integer, at least 1 (contract §4.1, §7.2). */
export const retryAfterSeconds = (msBeforeNext: number) => Math.max(1, Math.ceil(msBeforeNext / 1000));
