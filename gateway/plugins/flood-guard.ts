// Plugin `flood-guard`: a cheap limiter ahead of the PDP, keyed by client and subject, that counts only requests the
// PDP denied. A valid token replayed against a denial (a revoked subject, a capability not granted) is refused with
// 429 rate_limited once it has been denied `points` times in `durationS`, without a PDP call; allowed traffic is
// never charged, so no answer changes for normal callers.
import { z } from 'zod';
import { sendProblem } from '../../common/http.js';
import { limiterStore, retryAfterSeconds } from '../../common/rate-limit-store.js';
import { definePlugin, stateOf } from './plugin.js';

const DENIED_STATUSES = new Set([403, 404]);

export const floodGuard = definePlugin({
  name: 'flood-guard',
  settings: z.strictObject({
    points: z.number().int().positive().default(60),
    durationS: z.number().int().positive().default(60),
  }),
  after: ['verify-token'],
  perRoute: false,
  start(s, env) {
    const denials = limiterStore(env.redis).limiter('denied', s);
    return {
      handler: () => async (_req, res, next) => {
        const { claims } = stateOf(res);
        const key = `${claims!.client_id}:${claims!.sub}`;
        const seen = await denials.get(key).catch(() => null); // a store failure never blocks a caller
        if (seen && seen.consumedPoints >= s.points)
          return sendProblem(res, 'rate_limited', { headers: { 'retry-after': String(retryAfterSeconds(seen.msBeforeNext)) } });
        res.once('finish', () => {
          if (!stateOf(res).allow && DENIED_STATUSES.has(res.statusCode)) void denials.penalty(key, 1).catch(() => undefined);
        });
        next();
      },
    };
  },
});
