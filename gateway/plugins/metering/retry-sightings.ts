// How many times one request has been seen under one caller-sent request id within the retry window (usage-meter.ts):
// shared in Redis when configured (a retry sent to another gateway counts), else in a bounded map in this process.
import { RateLimiterRes } from 'rate-limiter-flexible';
import { limiterStore, type RedisClient } from '../../../common/rate-limit-store.js';

export interface Sightings {
  /** Counts one more sighting of `key` and returns how many there have been in its window (1 = the first). */
  count(key: string): Promise<number>;
}

/** Sightings remembered in one process, at most: past it the oldest are forgotten (a retry of one is then metered). */
const MAX_IN_PROCESS = 200_000;

export function sightingsIn(redis: RedisClient | undefined, windowS: number, allowed: number): Sightings {
  return redis ? sharedSightings(redis, windowS, allowed) : localSightings(windowS);
}

function sharedSightings(redis: RedisClient, windowS: number, allowed: number): Sightings {
  // A fixed window per key (INCR with a TTL), as the limiters keep theirs; past `allowed` it refuses but still counts.
  const counter = limiterStore(redis).limiter('metering-replays', { points: allowed, durationS: windowS });
  return {
    count: (key) =>
      counter.consume(key).then(
        (res) => res.consumedPoints,
        (err: unknown) => (err instanceof RateLimiterRes ? err.consumedPoints : 1), // a store failure meters the call
      ),
  };
}

function localSightings(windowS: number): Sightings {
  /** Key → its count and when its window ends, oldest first. */
  const seen = new Map<string, { n: number; until: number }>();
  return {
    async count(key) {
      const now = Date.now();
      const entry = seen.get(key);
      if (entry && entry.until > now) return ++entry.n;
      seen.delete(key);
      seen.set(key, { n: 1, until: now + windowS * 1000 });
      if (seen.size > MAX_IN_PROCESS) seen.delete(seen.keys().next().value!);
      return 1;
    },
  };
}
