// The two rate-limit layers are charged together: a request refused by one layer charges neither, in Redis (one Lua
// script, shared by every gateway) and in the in-process fallback alike.
import { describe, it, expect, afterAll } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createLogger } from '../common/log.js';
import { connectRedis } from '../common/rate-limit-store.js';
import { createRateLimiter } from '../gateway/rate-limit.js';

const log = createLogger('test', 'silent');
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const clients: Redis[] = [];
afterAll(() => clients.forEach((c) => c.disconnect()));

const stores: [string, () => Promise<Redis | undefined>][] = [
  ['Redis', async () => {
    const redis = (await connectRedis(redisUrl, log))!;
    clients.push(redis);
    return redis;
  }],
  ['the in-process fallback', async () => undefined],
];

describe.each(stores)('two-layer charging in %s', (_name, store) => {
  it('does not drain the tenant layer with requests the account layer refused', async () => {
    const limiter = createRateLimiter(await store(), log);
    const run = randomUUID();
    const tenant = { key: `test:${run}:tenant`, window: { points: 3, durationS: 60 } };
    const account = (id: string) => ({ key: `test:${run}:${id}`, window: { points: 1, durationS: 60 } });
    const answers = [];
    for (const id of ['a', 'a', 'a', 'a', 'b', 'c', 'd']) answers.push((await limiter.consume(tenant, account(id))).allowed);
    // a: 1 allowed, 3 refused by its account layer without charging the tenant; b and c use the tenant's remaining 2.
    expect(answers).toEqual([true, false, false, false, true, true, false]);
  });

  it('reports the stricter remainder and a retry-after from the refusing layer', async () => {
    const limiter = createRateLimiter(await store(), log);
    const run = randomUUID();
    const tenant = { key: `test:${run}:tenant`, window: { points: 10, durationS: 60 } };
    const account = { key: `test:${run}:acc`, window: { points: 2, durationS: 30 } };
    expect(await limiter.consume(tenant, account)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume(tenant, account)).toMatchObject({ allowed: true, remaining: 0 });
    const refused = await limiter.consume(tenant, account);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.retryAfterS).toBeGreaterThan(0);
    expect(refused.retryAfterS).toBeLessThanOrEqual(30);
  });
});

describe('Redis unreachable', () => {
  it('falls back to the in-process rule instead of failing or opening the gate', async () => {
    const redis = (await connectRedis('redis://127.0.0.1:1', log))!;
    clients.push(redis);
    const limiter = createRateLimiter(redis, log);
    const tenant = { key: 'test:down:tenant', window: { points: 5, durationS: 60 } };
    const account = { key: 'test:down:acc', window: { points: 1, durationS: 60 } };
    expect((await limiter.consume(tenant, account)).allowed).toBe(true);
    expect((await limiter.consume(tenant, account)).allowed).toBe(false);
  });
});
