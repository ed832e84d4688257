// Plugin `rate-limit`: the tenant and account layers (contract §8 rule 1), charged together after the allow.
// The windows come from the tenant's policy (returned with the PDP's allow) unless the file sets them for a route;
// a route with its own windows counts in its own buckets. The remainder of a read goes out with its answer (proxy.ts).
// A window found full is also remembered in this process until it ends: the plugin's screen refuses the tenant's (or
// the account's) next requests on that bucket ahead of the PDP, with no decision, no Redis round trip and no log row.
// The block stands until the full window ends even if an operator raises the limit meanwhile (docs/decisions.md).
import { z } from 'zod';
import { sendProblem } from '../../../common/http.js';
import type { RateLimitWindow } from '../../../wire/decision.js';
import { createRateLimiter } from './limiter.js';
import { localBlocks } from '../local-blocks.js';
import { retryAfterSeconds } from '../../../common/rate-limit-store.js';
import type { Response } from 'express';
import { definePlugin, stateOf, type RouteDefinition } from '../plugin.js';
import { settings } from './schema.js';

/**
 * Both layers' keys carry the tenant as a hash tag (`{tenantId}`), so on a Redis Cluster they share a slot and the one
 * script that charges both may run (an account belongs to one tenant).
 */
const windowKey = (tenantId: string, layer: string, bucket: string, w: RateLimitWindow) =>
  `rl:{${tenantId}}:${layer}:${bucket}:${w.points}:${w.durationS}`;
export const tenantLayerKey = (tenantId: string, bucket: string, w: RateLimitWindow) =>
  windowKey(tenantId, 'tenant', bucket, w);
export const accountLayerKey = (tenantId: string, accountId: string, bucket: string, w: RateLimitWindow) =>
  `${windowKey(tenantId, 'account', bucket, w)}:${accountId}`;

/** Each layer's bucket on a route: the route's own when the file gives it windows, else the tenant policy's `api`. */
const bucketsOf = (route: RouteDefinition, s: z.output<typeof settings>) => ({
  tenant: s.tenant ? route.operationId : 'api',
  account: s.account ? route.operationId : 'api',
});

/** The block keys of a route's two layers: windows come with the PDP's answer, so a block names the bucket only. */
const blockKeys = (buckets: ReturnType<typeof bucketsOf>, tenantId: string, accountId: string | undefined) => ({
  tenant: `${tenantId}:${buckets.tenant}`,
  account: accountId && `${tenantId}:${accountId}:${buckets.account}`,
});

export const rateLimit = definePlugin({
  name: 'rate-limit',
  settings,
  after: ['authorize'],
  screenBefore: 'authorize',
  perRoute: true,
  start(_global, env) {
    const limiter = createRateLimiter(env.redis, env.log, env.telemetry);
    const full = localBlocks();
    const refuse = (res: Response, layer: 'tenant' | 'account', retryAfterS: number) => {
      env.telemetry.rateLimited.inc({ layer });
      sendProblem(res, 'rate_limited', { headers: { 'retry-after': String(retryAfterS) } });
    };
    return {
      screen: (route, s) => {
        const buckets = bucketsOf(route, s);
        return (_req, res, next) => {
          const { claims } = stateOf(res);
          const keys = blockKeys(buckets, claims!.tenant_id, claims!.actor_account_id);
          const tenantWait = full.waitMs(keys.tenant);
          const accountWait = keys.account ? full.waitMs(keys.account) : 0;
          if (tenantWait > 0 || accountWait > 0)
            return refuse(
              res,
              tenantWait > 0 ? 'tenant' : 'account',
              retryAfterSeconds(Math.max(tenantWait, accountWait)),
            );
          next();
        };
      },
      handler: (route, s) => {
        const buckets = bucketsOf(route, s);
        return async (req, res, next) => {
          const { claims, allow } = stateOf(res);
          const tenant = s.tenant ?? allow!.rateLimit.tenant;
          const account = s.account ?? allow!.rateLimit.account;
          const limit = await limiter.consume(
            { key: tenantLayerKey(claims!.tenant_id, buckets.tenant, tenant), window: tenant },
            {
              key: accountLayerKey(claims!.tenant_id, claims!.actor_account_id!, buckets.account, account),
              window: account,
            }, // the PDP denies actor_unknown when absent
          );
          if (!limit.allowed) {
            const keys = blockKeys(buckets, claims!.tenant_id, claims!.actor_account_id);
            const fullFor = limit.fullForMs ?? { tenant: 0, account: 0 };
            if (fullFor.tenant > 0) full.block(keys.tenant, fullFor.tenant);
            if (fullFor.account > 0 && keys.account) full.block(keys.account, fullFor.account);
            return refuse(res, limit.refusedBy!, limit.retryAfterS);
          }
          if (req.method === 'GET' || req.method === 'HEAD') stateOf(res).remaining = limit.remaining;
          next();
        };
      },
    };
  },
});
