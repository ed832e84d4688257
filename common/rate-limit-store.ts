// Redis for limits, and fixed-window limiters from rate-limiter-flexible, one per (name, window): Redis when
// configured, with an in-process insurance limiter so a Redis outage neither stalls nor opens the gate; in-process only
// without Redis. Used by the issuer's token endpoint limit, the sign-in throttles, the gateway's flood guard and its
// tenant and account layers (gateway/plugins/rate-limit/limiter.ts).
import { Cluster, Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ConfigError, withoutPassword } from './config.js';
import type { Logger } from './log.js';
import type { Telemetry } from './telemetry.js';
import type { RateLimitWindow } from '../wire/decision.js';

/** A limiter's options beyond its window; a name always comes with the same ones. */
export interface LimiterOptions {
  /**
   * The keys' prefix in the store: by default `rl:<name>:<points>:<durationS>`; '' when the caller's keys already
   * name the limit and its window.
   */
  keyPrefix?: string;
  /**
   * rate-limiter-flexible's `inMemoryBlockOnConsumed` (Redis only): a key whose count in Redis reaches this many points
   * is refused from this process's memory, with no Redis round trip, until its window ends.
   */
  inMemoryBlockOnConsumed?: number;
}

export interface LimiterStore {
  /** The limiter for `name` with this window; the same instance (and keys) for the same name and window. */
  limiter(name: string, window: RateLimitWindow, options?: LimiterOptions): RateLimiterAbstract;
}

const READY_WAIT_MS = 1000;

/**
 * One Redis server, or a Redis Cluster (REDIS_CLUSTER): the
 * same commands; multi-key scripts keep their keys in one slot.
 */
export type RedisClient = Redis | Cluster;

/**
 * One ioredis client per service, set to fail fast (no offline queue, short timeout) so an outage costs no waiting and
 * the in-process fallback takes over at once. Commands issued in the same event-loop turn (by concurrent requests)
 * go out in one socket write (auto-pipelining; each still runs on its own, in order). Start waits up to a second for
 * the connection, so a healthy Redis counts from the first request. With `cluster`, `url` names one node of a Redis
 * Cluster and the client finds the others and follows the slots. The caller disconnects it.
 */
export async function connectRedis(
  url: string | undefined,
  log: Logger,
  telemetry?: Pick<Telemetry, 'redisErrors'>,
  cluster = false,
): Promise<RedisClient | undefined> {
  if (!url) return undefined;
  const node = { maxRetriesPerRequest: 1, commandTimeout: 200 };
  const redis: RedisClient = cluster
    ? new Cluster([url], {
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        redisOptions: { ...node, ...credentialsOf(url) },
      })
    : new Redis(url, { enableOfflineQueue: false, enableAutoPipelining: true, ...node });
  redis.on('error', (err) => {
    telemetry?.redisErrors.inc();
    log.warn({ err: err.message }, 'redis error; limits continue in-process');
  });
  // A server that answers but refuses the connection's setup (wrong user or password, no such database number) will
  // refuse it on every retry: that is a bad setting and stops the start. One that does not answer is an outage, which
  // the limits ride out in process (docs/decisions.md "Redis outage").
  let refusal: Error | undefined;
  const noteRefusal = (err: Error) => void (err.name === 'ReplyError' && (refusal ??= err));
  redis.on('error', noteRefusal);
  await new Promise<void>((resolve) => {
    const done = () => (clearTimeout(timer), resolve());
    const timer = setTimeout(done, READY_WAIT_MS);
    redis.once('ready', done);
  });
  redis.off('error', noteRefusal);
  if (refusal) {
    redis.disconnect();
    throw new ConfigError(
      `REDIS_URL=${withoutPassword(url)}: Redis refused the connection (${refusal.message.split('\n')[0]}); ` +
        'check the user, password and database number in it, or unset REDIS_URL for in-process limits',
    );
  }
  return redis;
}

/** A cluster's nodes take the seed URL's user and password (ioredis reads them from the URL only for a single node). */
function credentialsOf(url: string): { username?: string; password?: string } {
  const { username, password } = new URL(url);
  return {
    ...(username && { username: decodeURIComponent(username) }),
    ...(password && { password: decodeURIComponent(password) }),
  };
}

/**
 * The in-process limiter a Redis limiter answers from while Redis fails (its `insuranceLimiter`); `used` learns of
 * each such answer (rate-limiter-flexible says nothing of them).
 */
class Insurance extends RateLimiterMemory {
  constructor(
    options: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly used: () => void,
  ) {
    super(options);
  }
  override consume(...args: Parameters<RateLimiterMemory['consume']>) {
    this.used();
    return super.consume(...args);
  }
  override penalty(...args: Parameters<RateLimiterMemory['penalty']>) {
    this.used();
    return super.penalty(...args);
  }
  override reward(...args: Parameters<RateLimiterMemory['reward']>) {
    this.used();
    return super.reward(...args);
  }
}

/**
 * Limiters on `redis` (from connectRedis), or in-process only when it is undefined. `insuranceUsed` is called each
 * time a Redis limiter answers from its insurance limiter instead (a Redis error).
 */
export function limiterStore(redis: RedisClient | undefined, insuranceUsed: () => void = () => {}): LimiterStore {
  const limiters = new Map<string, RateLimiterAbstract>();
  return {
    limiter(name, w, options = {}) {
      const id = `rl:${name}:${w.points}:${w.durationS}`;
      let l = limiters.get(id);
      if (!l) {
        const window = { keyPrefix: options.keyPrefix ?? id, points: w.points, duration: w.durationS };
        l = redis
          ? new RateLimiterRedis({
              ...window,
              storeClient: redis,
              rejectIfRedisNotReady: true,
              inMemoryBlockOnConsumed: options.inMemoryBlockOnConsumed,
              insuranceLimiter: new Insurance(window, insuranceUsed),
            })
          : new RateLimiterMemory(window);
        limiters.set(id, l);
      }
      return l;
    },
  };
}

/** Seconds a refused caller should wait: an integer, at least 1 (contract §4.1, §7.2). */
export const retryAfterSeconds = (msBeforeNext: number) => Math.max(1, Math.ceil(msBeforeNext / 1000));
