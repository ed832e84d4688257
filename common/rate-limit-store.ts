// Redis for limits, and fixed-window limiters from rate-limiter-flexible, one per (name, window): Redis when configured,
// with an in-process insurance limiter so a Redis outage neither stalls nor opens the gate; in-process only without
// Redis. Used by the issuer's token endpoint limit and the gateway's flood guard (the gateway's two API layers are
// one Lua script on the same client: gateway/rate-limit.ts).
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
}

const READY_WAIT_MS = 1000;

/**
 * One ioredis client per service, set to fail fast (no offline queue, short timeout) so an outage costs no waiting and
 * the in-process fallback takes over at once. Start waits up to a second for the connection, so a healthy Redis
 * counts from the first request. The caller disconnects it.
 */
export async function connectRedis(url: string | undefined, log: Logger): Promise<Redis | undefined> {
  if (!url) return undefined;
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 200 });
  redis.on('error', (err) => log.warn({ err: err.message }, 'redis error; limits continue in-process'));
  await new Promise<void>((resolve) => {
    const done = () => (clearTimeout(timer), resolve());
    const timer = setTimeout(done, READY_WAIT_MS);
    redis.once('ready', done);
  });
  return redis;
}

/** Limiters on `redis` (from connectRedis), or in-process only when it is undefined. */
export function limiterStore(redis: Redis | undefined): LimiterStore {
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
  };
}

/** Seconds a refused caller should wait: an integer, at least 1 (contract §4.1, §7.2). */
export const retryAfterSeconds = (msBeforeNext: number) => Math.max(1, Math.ceil(msBeforeNext / 1000));
