// Plugin `rate-limit`: the tenant and account layers (contract §8 rule 1), charged together after the allow.
// The windows come from the tenant's policy (returned with the PDP's allow) unless the file sets them for a route;
// a route with its own windows counts in its own buckets. The remainder of a read goes out with its answer (proxy.ts).
// A layer refused in this process stays refused here until its window ends (limiter.ts): the plugin's screen refuses
// the tenant's (or the account's) next requests on that bucket ahead of the PDP, with no decision, no Redis round trip
// and no log row. It finds the windows of the tenant's policy as the PDP last gave them, so the block stands until the
// full window ends even if an operator raises the limit meanwhile (docs/decisions.md).
import { z } from 'zod';
import { sendProblem } from '../../../common/http.js';
import type { RateLimitPolicy, RateLimitWindow } from '../../../wire/decision.js';
import { createRateLimiter, type Layer, type LayerName } from './limiter.js';
import { retryAfterSeconds } from '../../../common/rate-limit-store.js';
import type { Response } from 'express';
import { definePlugin, stateOf, type RouteDefinition } from '../plugin.js';
import { settings } from './schema.js';

/**
 * Both layers' keys carry the tenant as a hash tag (`{tenantId}`), so on a Redis Cluster a tenant's counts live on one
 * node: a node's outage moves a tenant's two layers to the in-process insurance together, never one of them alone.
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

interface Caller {
  tenantId: string;
  /** Absent from a token without an actor, which the PDP denies (actor_unknown): its screen checks the tenant only. */
  accountId: string | undefined;
}

/** A route's two layers for a caller with these windows (a layer whose window or account is unknown has none). */
const layersOf = (
  buckets: ReturnType<typeof bucketsOf>,
  { tenantId, accountId }: Caller,
  windows: { tenant?: RateLimitWindow | undefined; account?: RateLimitWindow | undefined },
): { tenant?: Layer | undefined; account?: Layer | undefined } => ({
  tenant: windows.tenant && { key: tenantLayerKey(tenantId, buckets.tenant, windows.tenant), window: windows.tenant },
  account:
    windows.account && accountId !== undefined
      ? { key: accountLayerKey(tenantId, accountId, buckets.account, windows.account), window: windows.account }
      : undefined,
});

export const rateLimit = definePlugin({
  name: 'rate-limit',
  settings,
  after: ['authorize'],
  screenBefore: 'authorize',
  perRoute: true,
  start(_global, env) {
    const limiter = createRateLimiter(env.redis, env.log, env.telemetry);
    /** Each tenant's policy windows as the PDP last answered them (one entry per tenant), for the screen. */
    const policies = new Map<string, RateLimitPolicy>();
    const refuse = (res: Response, layer: LayerName, retryAfterS: number) => {
      env.telemetry.rateLimited.inc({ layer });
      sendProblem(res, 'rate_limited', { headers: { 'retry-after': String(retryAfterS) } });
    };
    const callerOf = (res: Response): Caller => {
      const { claims } = stateOf(res);
      return { tenantId: claims!.tenant_id, accountId: claims!.actor_account_id };
    };
    const blockedForMs = async (name: LayerName, layer: Layer | undefined) =>
      layer ? limiter.blockedForMs(name, layer) : 0;
    return {
      screen: (route, s) => {
        const buckets = bucketsOf(route, s);
        return async (_req, res, next) => {
          const caller = callerOf(res);
          const policy = policies.get(caller.tenantId);
          const layers = layersOf(buckets, caller, {
            tenant: s.tenant ?? policy?.tenant,
            account: s.account ?? policy?.account,
          });
          const tenantWait = await blockedForMs('tenant', layers.tenant);
          const accountWait = await blockedForMs('account', layers.account);
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
          const caller = callerOf(res);
          const policy = stateOf(res).allow!.rateLimit;
          policies.set(caller.tenantId, policy);
          // Both layers are known here: the windows came with the allow, and the PDP denies actor_unknown.
          const layers = layersOf(buckets, caller, {
            tenant: s.tenant ?? policy.tenant,
            account: s.account ?? policy.account,
          });
          const limit = await limiter.consume(layers.tenant!, layers.account!);
          if (!limit.allowed) return refuse(res, limit.refusedBy!, limit.retryAfterS);
          if (req.method === 'GET' || req.method === 'HEAD') stateOf(res).remaining = limit.remaining;
          next();
        };
      },
    };
  },
});
