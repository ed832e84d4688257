// Two rate-limit layers, tenant and account (contract §8 rule 1), each a fixed window of rate-limiter-flexible: one
// limiter per layer and window from the limiter store (common/rate-limit-store.ts), RateLimiterRedis when Redis is
// configured (one count for every gateway sharing it, answered by its in-process insuranceLimiter while Redis fails),
// RateLimiterMemory without Redis. Both layers are charged in the same event-loop turn, so ioredis sends the two
// charges in one write and one round trip, and a refusal gives back (`reward`) what the request charged, so a request
// refused by one layer drains neither (docs/decisions.md "Both layers charged per request" says why this way).
// A layer Redis refused stays refused in this process until its window ends (`inMemoryBlockOnConsumed` one point past
// the limit: the first refusal), with no Redis round trip; in process only, the window's own count past the limit is
// that block. The plugin's screen reads it ahead of the PDP (`blockedForMs`).
import { RateLimiterRes, type RateLimiterAbstract, type RateLimiterRedis } from 'rate-limiter-flexible';
import type { RateLimitWindow } from '../../../wire/decision.js';
import type { Logger } from '../../../common/log.js';
import type { Telemetry } from '../../../common/telemetry.js';
import { limiterStore, retryAfterSeconds, type RedisClient } from '../../../common/rate-limit-store.js';

export interface LimitResult {
  allowed: boolean;
  /** The stricter of the two layers, after this request. */
  remaining: number;
  retryAfterS: number;
  /** The layer that refused; only when not allowed. */
  refusedBy?: 'tenant' | 'account';
  /** Milliseconds until the refusing layer's window ends (0 for the other layer); only when not allowed. */
  fullForMs?: { tenant: number; account: number };
}

export interface Layer {
  key: string;
  window: RateLimitWindow;
}
export type LayerName = 'tenant' | 'account';

export interface RateLimiter {
  consume(tenant: Layer, account: Layer): Promise<LimitResult>;
  /** Milliseconds this process refuses `layer` for without charging anything (it refused in this window); 0: none. */
  blockedForMs(name: LayerName, layer: Layer): Promise<number>;
}

/** The check of rate-limiter-flexible's in-memory block: public on its store limiters, absent from its types. */
type Blocking = RateLimiterRedis & { getInMemoryBlockMsBeforeExpire(rlKey: string): number };

interface Charge {
  name: LayerName;
  layer: Layer;
  limiter: RateLimiterAbstract;
  /** The library's answer: a resolved consume, or the refusal it rejected with. */
  res: RateLimiterRes;
  allowed: boolean;
}

export function createRateLimiter(
  redis: RedisClient | undefined,
  log: Logger,
  telemetry?: Pick<Telemetry, 'redisErrors'>,
): RateLimiter {
  const store = limiterStore(redis, () => {
    telemetry?.redisErrors.inc();
    log.warn('redis unavailable; rate limiting in-process');
  });
  // Keys as the plugin makes them (they name the layer and window), so one Redis key per layer, bucket and window.
  const limiterOf = (name: LayerName, w: RateLimitWindow) =>
    store.limiter(`gateway-${name}`, w, { keyPrefix: '', inMemoryBlockOnConsumed: w.points + 1 });

  const charge = async (name: LayerName, layer: Layer): Promise<Charge> => {
    const limiter = limiterOf(name, layer.window);
    try {
      return { name, layer, limiter, res: await limiter.consume(layer.key), allowed: true };
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal; // a Redis error is answered by the insurance limiter
      return { name, layer, limiter, res: refusal, allowed: false };
    }
  };

  const refusal = (name: LayerName, ms: number): LimitResult => ({
    allowed: false,
    remaining: 0,
    retryAfterS: retryAfterSeconds(ms),
    refusedBy: name,
    fullForMs: { tenant: name === 'tenant' ? ms : 0, account: name === 'account' ? ms : 0 },
  });

  /**
   * Gives back what the request charged, `refused` being the first layer (tenant before account) that said no: every
   * allowed layer's point, and in Redis a refusing layer's own point when Redis counted it (a block answers with no
   * count: 0), so a shared count is what was admitted and the block remembers the refusal; in process a refused point
   * stays, as the block.
   */
  const refuse = async (refused: Charge, charges: Charge[]): Promise<LimitResult> => {
    const counted = (c: Charge) => c.allowed || (redis !== undefined && c.res.consumedPoints > 0);
    await Promise.all(charges.filter(counted).map((c) => c.limiter.reward(c.layer.key)));
    return refusal(refused.name, refused.res.msBeforeNext);
  };

  const blockedForMs = async (name: LayerName, layer: Layer) => {
    const limiter = limiterOf(name, layer.window);
    if (redis) return (limiter as Blocking).getInMemoryBlockMsBeforeExpire(limiter.getKey(layer.key));
    const res = await limiter.get(layer.key);
    return res && res.consumedPoints > layer.window.points ? res.msBeforeNext : 0;
  };

  return {
    async consume(tenant, account) {
      // A blocked account is refused before its tenant is charged: the tenant's point, taken and given back, would
      // meanwhile make its window look fuller to every other account's requests.
      const accountBlockedMs = await blockedForMs('account', account);
      if (accountBlockedMs > 0) return refusal('account', accountBlockedMs);
      const charges = await Promise.all([charge('tenant', tenant), charge('account', account)]);
      const [t, a] = charges;
      const refused = charges.find((c) => !c.allowed);
      if (refused) return refuse(refused, charges);
      return { allowed: true, remaining: Math.min(t.res.remainingPoints, a.res.remainingPoints), retryAfterS: 0 };
    },
    blockedForMs,
  };
}
