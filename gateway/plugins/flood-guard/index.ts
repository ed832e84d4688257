// Plugin `flood-guard`: a cheap limiter ahead of the PDP, keyed by client and subject, that counts only requests the
// PDP denied. A valid token replayed against a denial (a revoked subject, a capability not granted) is refused with
// 429 rate_limited once it has been denied `points` times in `durationS`, without a PDP call; allowed traffic is
// never charged, so no answer changes for normal callers.
// The count is shared (Redis, via the limiter store); the refusal is decided from what this gateway holds: a denial
// that brings the shared count to the limit blocks the key here until the window ends. Allowed traffic therefore
// costs no Redis round trip at all, and a gateway that has not yet seen the flood lets one more request of it reach
// the PDP (whose denial then blocks it there too): at most one extra decision per gateway process and window.
import { sendProblem } from '../../../common/http.js';
import { limiterStore, retryAfterSeconds } from '../../../common/rate-limit-store.js';
import { localBlocks } from './blocks.js';
import { definePlugin, stateOf } from '../plugin.js';
import { settings } from './schema.js';

const DENIED_STATUSES = new Set([403, 404]);

export const floodGuard = definePlugin({
  name: 'flood-guard',
  settings,
  after: ['verify-token'],
  perRoute: false,
  start(s, env) {
    const denials = limiterStore(env.redis).limiter('denied', s);
    const blocked = localBlocks();
    /** Denials being counted, so a request that follows one closely waits for its count instead of racing past it. */
    const counting = new Map<string, Promise<void>>();

    const count = (key: string): Promise<void> =>
      denials.penalty(key, 1).then(
        (res) => {
          if (res.consumedPoints >= s.points) blocked.block(key, res.msBeforeNext);
        },
        () => undefined, // a store failure never blocks a caller
      );

    return {
      handler: () => async (_req, res, next) => {
        const { claims } = stateOf(res);
        const key = `${claims!.client_id}:${claims!.sub}`;
        const inFlight = counting.get(key);
        if (inFlight) await inFlight;
        const waitMs = blocked.waitMs(key);
        if (waitMs > 0) {
          env.telemetry.rateLimited.inc({ layer: 'flood_guard' });
          return sendProblem(res, 'rate_limited', { headers: { 'retry-after': String(retryAfterSeconds(waitMs)) } });
        }
        res.once('finish', () => {
          if (stateOf(res).allow || !DENIED_STATUSES.has(res.statusCode)) return;
          const counted = count(key).finally(() => {
            if (counting.get(key) === counted) counting.delete(key);
          });
          counting.set(key, counted);
        });
        next();
      },
    };
  },
});
