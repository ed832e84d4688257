// The two rate-limit layers on rate-limiter-flexible (gateway/plugins/rate-limit/limiter.ts) charge one layer after
// the other and give back on a refusal; an account already refused in this process (its in-memory block) is refused
// before its tenant is charged, so a burst of its requests cannot make the tenant's window look full to the others.
import { describe, it, expect, afterAll } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../common/log.js';
import { connectRedis, type RedisClient } from '../../common/rate-limit-store.js';
import { createRateLimiter } from '../../gateway/plugins/rate-limit/limiter.js';
import { accountLayerKey, tenantLayerKey } from '../../gateway/plugins/rate-limit/index.js';

describe('rate-limit-blocks', () => {
  const log = createLogger('test', 'silent');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const clients: RedisClient[] = [];
  afterAll(() => clients.forEach((c) => c.disconnect()));

  const stores: [string, () => Promise<RedisClient | undefined>][] = [
    [
      'Redis',
      async () => {
        const redis = (await connectRedis(redisUrl, log))!;
        clients.push(redis);
        return redis;
      },
    ],
    ['process', async () => undefined],
  ];

  describe.each(stores)('an account blocked in %s', (_name, store) => {
    it("is refused without charging its tenant: a burst of its requests leaves the tenant's last point to another", async () => {
      const redis = await store();
      const limiter = createRateLimiter(redis, log);
      const run = randomUUID();
      const window = (points: number) => ({ points, durationS: 60 });
      const tenant = { key: tenantLayerKey(run, 'api', window(2)), window: window(2) };
      const account = (id: string) => ({ key: accountLayerKey(run, id, 'api', window(1)), window: window(1) });
      expect((await limiter.consume(tenant, account('noisy'))).allowed).toBe(true);
      expect(await limiter.consume(tenant, account('noisy'))).toMatchObject({ allowed: false, refusedBy: 'account' });
      expect(await limiter.blockedForMs('account', account('noisy'))).toBeGreaterThan(0);

      const burst = Array.from({ length: 50 }, () => limiter.consume(tenant, account('noisy')));
      const quiet = limiter.consume(tenant, account('quiet'));
      const answers = await Promise.all([...burst, quiet]);
      expect(answers.slice(0, -1).every((a) => !a.allowed && a.refusedBy === 'account')).toBe(true);
      expect(answers.at(-1)).toMatchObject({ allowed: true, remaining: 0 });
      if (redis) expect(await redis.get(tenant.key)).toBe('2');
      expect(await limiter.blockedForMs('tenant', tenant)).toBe(0); // full, but never refused: not blocked
    });
  });
});
