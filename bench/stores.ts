// `npm run bench`: a private PostgreSQL and Redis started for the run (temporary directory, free ports), so the CPU of
// their processes belongs to the benchmark alone. The shared servers on this machine serve other work too: their CPU
// cannot be attributed, and stopping or flushing them is not ours to do.
import knexFactory from 'knex';
import { Redis } from 'ioredis';
import { privatePostgres, privateRedis } from '../tests/support/processes.js';

export interface PrivateStore {
  url: string;
  /** The process whose CPU (with its children's, for PostgreSQL) is the store's. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * fsync on, as a default server has it; pg_stat_statements counts the statements (round trips) each measurement sends.
 */
export async function startPrivatePostgres(): Promise<PrivateStore> {
  const pg = await privatePostgres({ fsync: 'on', shared_preload_libraries: 'pg_stat_statements' });
  const admin = knexFactory({ client: 'pg', connection: pg.url, pool: { min: 0, max: 1 } });
  await admin.raw('create database bench').finally(() => admin.destroy());
  const url = pg.url.replace(/\/postgres$/, '/bench');
  const bench = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  await bench.raw('create extension pg_stat_statements').finally(() => bench.destroy());
  return { url, pid: pg.server.pid, stop: () => pg.destroy() };
}

export async function startPrivateRedis(): Promise<PrivateStore> {
  const redis = await privateRedis();
  return { url: redis.url, pid: redis.server.pid, stop: () => redis.server.stop() };
}

/**
 * Statements PostgreSQL executed (all databases, pg_stat_statements) and commands Redis processed so far; the
 * difference over a measurement, per request, is the round trips a request costs. Each reading adds one of its own.
 */
export async function storeCounters(pg: PrivateStore, redis: PrivateStore) {
  const knex = knexFactory({ client: 'pg', connection: pg.url, pool: { min: 0, max: 1 } });
  const client = new Redis(redis.url);
  return {
    async read(): Promise<{ postgres: number; redis: number }> {
      const [statements] = (await knex.raw('select coalesce(sum(calls), 0)::bigint as n from pg_stat_statements')).rows;
      const processed = /total_commands_processed:(\d+)/.exec(await client.info('stats'))![1];
      return { postgres: Number(statements.n), redis: Number(processed) };
    },
    /** The repeated statements (over 50 calls) with the most execution time: what the routes' database time goes to. */
    top: async (n: number): Promise<{ calls: number; meanUs: number; totalMs: number; query: string }[]> =>
      (
        await knex.raw(
          `select calls::int, round(mean_exec_time * 1000)::int as "meanUs", round(total_exec_time)::int as "totalMs",
        left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query from pg_stat_statements where calls > 50 order by total_exec_time desc limit ?`,
          [n],
        )
      ).rows,
    close: async () => (client.disconnect(), await knex.destroy()),
  };
}
