// The two rate-limit layers are charged together: a request refused by one layer charges neither, in Redis (shared by
// every gateway; both charges in one round trip), on a Redis Cluster (both keys in one slot) and in the in-process
// fallback alike.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { once } from 'node:events';
import { createLogger } from '../../common/log.js';
import { connectRedis, limiterStore, type RedisClient } from '../../common/rate-limit-store.js';
import { createRateLimiter } from '../../gateway/plugins/rate-limit/limiter.js';
import { accountLayerKey, tenantLayerKey } from '../../gateway/plugins/rate-limit/index.js';
import { createTelemetry } from '../../common/telemetry.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';

describe('rate-limit', () => {
  const log = createLogger('test', 'silent');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const clients: RedisClient[] = [];
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterAll(async () => {
    clients.forEach((c) => c.disconnect());
    await cluster?.stop();
  });

  /**
   * A client that has connected: connectRedis waits one second at most (a start rides out an outage), which a loaded
   * machine can spend before a cluster client has learnt the slots; these tests are about charging in Redis, not about
   * starting without it ("Redis unreachable" below is).
   */
  const connect = async (url: string, asCluster = false) => {
    const redis = (await connectRedis(url, log, undefined, asCluster))!;
    clients.push(redis);
    if (redis.status !== 'ready') await once(redis, 'ready', { signal: AbortSignal.timeout(30_000) });
    return redis;
  };
  const stores: [string, () => Promise<RedisClient | undefined>][] = [
    ['Redis', () => connect(redisUrl)],
    ['a Redis Cluster', () => connect(cluster.url, true)],
    ['the in-process fallback', async () => undefined],
  ];

  describe.each(stores)('two-layer charging in %s', (_name, store) => {
    it(
      'does not drain the tenant layer with requests the account layer refused, ' + 'and names the refusing layer',
      async () => {
        const redis = await store();
        const limiter = createRateLimiter(redis, log);
        const run = randomUUID();
        const window = (points: number) => ({ points, durationS: 60 });
        // Keys as the gateway makes them: both layers under the tenant's hash tag.
        const tenant = { key: tenantLayerKey(run, 'api', window(3)), window: window(3) };
        const account = (id: string) => ({ key: accountLayerKey(run, id, 'api', window(1)), window: window(1) });
        const answers = [];
        for (const id of ['a', 'a', 'a', 'a', 'b', 'c', 'd']) {
          const result = await limiter.consume(tenant, account(id));
          answers.push(result.allowed ? 'allowed' : result.refusedBy);
        }
        // a: 1 allowed, 3 refused by its account layer without charging the tenant; b and c use the tenant's remaining 2.
        expect(answers).toEqual(['allowed', 'account', 'account', 'account', 'allowed', 'allowed', 'tenant']);
        // Charged in Redis, not in process: the counters are there (read back rather than counting client errors, since a
        // command that timed out on a loaded machine still ran in Redis while this process fell back for that request).
        // d's request, refused by the tenant, left d's count at nothing: charged beside the tenant, then given back.
        const count = async (key: string) => Number((await redis!.get(key)) ?? 0);
        if (redis)
          expect(
            await Promise.all([tenant.key, ...['a', 'b', 'c', 'd'].map((id) => account(id).key)].map(count)),
          ).toEqual([3, 1, 1, 1, 0]);
      },
    );

    it('reports the stricter remainder and a retry-after from the refusing layer', async () => {
      const limiter = createRateLimiter(await store(), log);
      const run = randomUUID();
      const tenant = { key: `test:{${run}}:tenant`, window: { points: 10, durationS: 60 } };
      const account = { key: `test:{${run}}:acc`, window: { points: 2, durationS: 30 } };
      expect(await limiter.consume(tenant, account)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await limiter.consume(tenant, account)).toMatchObject({ allowed: true, remaining: 0 });
      const refused = await limiter.consume(tenant, account);
      expect(refused).toMatchObject({ allowed: false, remaining: 0 });
      expect(refused.retryAfterS).toBeGreaterThan(0);
      expect(refused.retryAfterS).toBeLessThanOrEqual(30);
      // Only the full layer is reported full, with the time its window has left (what the gateway blocks locally).
      expect(refused.fullForMs!.tenant).toBe(0);
      expect(refused.fullForMs!.account).toBeGreaterThan(0);
      expect(refused.fullForMs!.account).toBeLessThanOrEqual(30_000);
    });
  });

  describe('Redis', () => {
    it("receives both layers' charges in one write", async () => {
      const redis = (await connect(redisUrl)) as Redis;
      const limiter = createRateLimiter(redis, log);
      const run = randomUUID();
      const w = { points: 5, durationS: 60 };
      const layers = (id: string) =>
        [
          { key: tenantLayerKey(run, 'api', w), window: w },
          { key: accountLayerKey(run, id, 'api', w), window: w },
        ] as const;
      await limiter.consume(...layers('warm-up')); // loads the library's script into Redis (a first call may resend it)
      const stream = redis.stream;
      const write = stream.write.bind(stream);
      let writes = 0;
      stream.write = ((...args: Parameters<typeof write>) => (writes++, write(...args))) as typeof stream.write;
      try {
        expect((await limiter.consume(...layers('a'))).allowed).toBe(true);
      } finally {
        stream.write = write;
      }
      expect(writes).toBe(1);
    });
  });

  describe('Redis unreachable', () => {
    it(
      'falls back to the in-process rule instead of failing or opening the gate, ' + 'and counts the Redis errors',
      async () => {
        const telemetry = createTelemetry();
        const redis = (await connectRedis('redis://127.0.0.1:1', log, telemetry))!;
        clients.push(redis);
        const connectionErrors = (await telemetry.redisErrors.get()).values[0]?.value ?? 0;
        expect(connectionErrors).toBeGreaterThan(0); // the refused connection, reported while start waited for it
        const limiter = createRateLimiter(redis, log, telemetry);
        const tenant = { key: 'test:down:tenant', window: { points: 5, durationS: 60 } };
        const account = { key: 'test:down:acc', window: { points: 1, durationS: 60 } };
        expect((await limiter.consume(tenant, account)).allowed).toBe(true);
        expect((await limiter.consume(tenant, account)).allowed).toBe(false);
        // each refused command
        expect((await telemetry.redisErrors.get()).values[0]!.value).toBeGreaterThanOrEqual(connectionErrors + 2);
      },
    );
  });

  describe('a Redis Cluster', () => {
    it('holds both layers of a tenant in one slot, so one node charges both', async () => {
      const redis = await connect(cluster.url, true);
      const run = randomUUID();
      const w = { points: 5, durationS: 60 };
      const keys = [tenantLayerKey(run, 'api', w), accountLayerKey(run, `acc-${run}`, 'api', w)];
      const slots = await Promise.all(keys.map((k) => (redis as RedisClient).call('CLUSTER', 'KEYSLOT', k)));
      expect(slots[0]).toBe(slots[1]);
      expect(
        (await createRateLimiter(redis, log).consume({ key: keys[0]!, window: w }, { key: keys[1]!, window: w }))
          .allowed,
      ).toBe(true);
      // charged in the cluster, not in process
      expect(await Promise.all(keys.map((k) => redis.get(k)))).toEqual(['1', '1']);
    });

    it('runs the single-key limiters (token endpoint, flood guard) on it', async () => {
      const limiter = limiterStore(await connect(cluster.url, true)).limiter(`test-${randomUUID()}`, {
        points: 1,
        durationS: 60,
      });
      await expect(limiter.consume('caller')).resolves.toMatchObject({ remainingPoints: 0 });
      await expect(limiter.consume('caller')).rejects.toMatchObject({ remainingPoints: 0 });
    });
  });
});
