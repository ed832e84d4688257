// Two rate-limit layers, tenant and account (contract §8 rule 1), as fixed windows charged together: one Lua script
// checks both and charges both only when both have room, in one Redis round trip, so a request refused by one layer
// never drains the other, and every gateway sharing the Redis enforces one combined limit.
// Redis down or absent: the same rule in process (each gateway limits on its own), with no wait on Redis.
import type { RateLimitWindow } from '../../../wire/decision.js';
import type { Logger } from '../../../common/log.js';
import type { Telemetry } from '../../../common/telemetry.js';
import { retryAfterSeconds, type RedisClient } from '../../../common/rate-limit-store.js';

export interface LimitResult {
  allowed: boolean;
  /** The stricter of the two layers, after this request. */
  remaining: number;
  retryAfterS: number;
  /** The layer that refused (tenant when both did); only when not allowed. */
  refusedBy?: 'tenant' | 'account';
  /**
   * For each full layer, milliseconds until its window ends; only when not allowed by the authoritative count (Redis
   * when configured, in process without it), never by the in-process stand-in of a Redis outage.
   */
  fullForMs?: { tenant: number; account: number };
}

export interface Layer {
  key: string;
  window: RateLimitWindow;
}

export interface RateLimiter {
  consume(tenant: Layer, account: Layer): Promise<LimitResult>;
}

// Returns {allowed 0|1, remaining, ms until the refusing layer's window ends, refusing layer: 1 tenant, 2 account,
// ms until the tenant window ends if full (else 0), the same for the account window}.
const CHARGE_BOTH = `
local function state(key, ms)
  local used = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then ttl = ms end
  return used, ttl
end
local tp, tms, ap, ams = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tu, tt = state(KEYS[1], tms)
local au, at = state(KEYS[2], ams)
if tu >= tp or au >= ap then
  local wait = 0
  if tu >= tp then wait = tt end
  if au >= ap and at > wait then wait = at end
  local refused, tfull, afull = 2, 0, 0
  if tu >= tp then refused, tfull = 1, tt end
  if au >= ap then afull = at end
  return {0, math.max(0, math.min(tp - tu, ap - au)), wait, refused, tfull, afull}
end
for i, ms in ipairs({tms, ams}) do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ms) end
end
return {1, math.min(tp - tu, ap - au) - 1, 0}
`;

type Charged = [
  allowed: number,
  remaining: number,
  waitMs: number,
  refused?: number,
  tenantFullMs?: number,
  accountFullMs?: number,
];
type ChargeBoth = (
  tenantKey: string,
  accountKey: string,
  tp: number,
  tms: number,
  ap: number,
  ams: number,
) => Promise<Charged>;

/** The script's rule over an in-process map; synchronous, hence atomic within this process. */
function inProcessCharge() {
  const windows = new Map<string, { used: number; resetAt: number }>();
  const state = (key: string, ms: number, now: number) => {
    let w = windows.get(key);
    if (!w || w.resetAt <= now) windows.set(key, (w = { used: 0, resetAt: now + ms }));
    return w;
  };
  return (tenant: Layer, account: Layer): Charged => {
    const now = Date.now();
    const t = state(tenant.key, tenant.window.durationS * 1000, now);
    const a = state(account.key, account.window.durationS * 1000, now);
    const tFull = t.used >= tenant.window.points;
    const aFull = a.used >= account.window.points;
    const room = Math.min(tenant.window.points - t.used, account.window.points - a.used);
    const tWait = tFull ? t.resetAt - now : 0;
    const aWait = aFull ? a.resetAt - now : 0;
    if (tFull || aFull) return [0, Math.max(0, room), Math.max(tWait, aWait), tFull ? 1 : 2, tWait, aWait];
    t.used++;
    a.used++;
    return [1, room - 1, 0];
  };
}

export function createRateLimiter(
  redis: RedisClient | undefined,
  log: Logger,
  telemetry?: Pick<Telemetry, 'redisErrors'>,
): RateLimiter {
  const local = inProcessCharge();
  redis?.defineCommand('chargeBothLayers', { numberOfKeys: 2, lua: CHARGE_BOTH });
  const chargeBoth = redis && (redis as unknown as { chargeBothLayers: ChargeBoth }).chargeBothLayers.bind(redis);

  return {
    async consume(tenant, account) {
      let standIn = false;
      const [allowed, remaining, waitMs, refused, tenantFullMs, accountFullMs] = chargeBoth
        ? await chargeBoth(
            tenant.key,
            account.key,
            tenant.window.points,
            tenant.window.durationS * 1000,
            account.window.points,
            account.window.durationS * 1000,
          ).catch((err: Error) => {
            telemetry?.redisErrors.inc();
            log.warn({ err: err.message }, 'redis unavailable; rate limiting in-process');
            standIn = true;
            return local(tenant, account);
          })
        : local(tenant, account);
      if (allowed === 1) return { allowed: true, remaining, retryAfterS: 0 };
      return {
        allowed: false,
        remaining,
        retryAfterS: retryAfterSeconds(waitMs),
        refusedBy: refused === 1 ? 'tenant' : 'account',
        ...(!standIn && { fullForMs: { tenant: tenantFullMs ?? 0, account: accountFullMs ?? 0 } }),
      };
    },
  };
}
