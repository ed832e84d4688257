// Where the PDP learns the database's revision without asking the database (issue 33, docs/decisions.md "The revision
// feed"). Every change that can alter a decision advances the revision in its own transaction (migration 011), and
// PostgreSQL tells the writer the number it committed (migration 013); the writer's process publishes it here before
// the change is acknowledged. A PDP reads the feed once per batch: when the feed shows nothing newer than the revision
// of a database reading it made after it last saw the feed's token, its facts in memory are current.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from './config.js';
import type { Database } from './db.js';
import type { Logger } from './log.js';
import { connectRedis, type RedisClient } from './rate-limit-store.js';
import type { Telemetry } from './telemetry.js';

/** The feed's state: the highest revision published, and the token of the feed's lifetime. */
export interface RevisionMark {
  revision: number;
  /**
   * Random, made by whoever found the feed empty: a feed that lost what was published (a Redis restarted without its
   * data) comes back with another token, so a PDP never takes a new feed's lower revision for the one it saw.
   */
  token: string;
}

/**
 * How long the feed alone may vouch for the facts a PDP holds after it read the database's revision. A change no
 * process published (an operator's SQL, a writer started without REDIS_URL) reaches decisions within this time, and a
 * writer whose publication failed waits this long before it acknowledges its change.
 */
export const FEED_TRUST_MS = 1000;

export interface RevisionFeed {
  /** Publishes a committed revision (the feed keeps the highest); resolves once the feed holds it. */
  publish(revision: number): Promise<void>;
  read(): Promise<RevisionMark>;
  /** FEED_TRUST_MS, for the writers (common/db.ts) and the PDP (policies/store.ts) alike. */
  trustMs: number;
  close(): Promise<void>;
}

/** For one process that alone opens its embedded database (`npm start`, a test's system): memory is the feed. */
export function inProcessFeed(): RevisionFeed {
  const mark: RevisionMark = { revision: 0, token: randomUUID() };
  return {
    publish: async (revision) => void (mark.revision = Math.max(mark.revision, revision)),
    read: async () => ({ ...mark }),
    trustMs: FEED_TRUST_MS,
    close: async () => {},
  };
}

/**
 * One hash in Redis: `rev` only ever grows, `token` is set by whoever finds it missing. One script both publishes and
 * reads (a PDP publishes 0), so each is one round trip and the token is never missing from an answer.
 */
const FEED_SCRIPT = `
redis.call('hsetnx', KEYS[1], 'token', ARGV[2])
local rev = redis.call('hget', KEYS[1], 'rev') or '0'
if tonumber(ARGV[1]) > tonumber(rev) then
  rev = ARGV[1]
  redis.call('hset', KEYS[1], 'rev', rev)
end
return {rev, redis.call('hget', KEYS[1], 'token')}`;

type FeedCommand = (key: string, revision: number, token: string) => Promise<[string, string]>;

/** The feed of the deployment's Redis, for PDPs and writers in several processes. */
export function redisFeed(redis: RedisClient, key: string, log: Logger): RevisionFeed {
  redis.defineCommand('pdpRevisionFeed', { numberOfKeys: 1, lua: FEED_SCRIPT });
  const command = (redis as unknown as { pdpRevisionFeed: FeedCommand }).pdpRevisionFeed.bind(redis);
  const mark = async (revision: number): Promise<RevisionMark> => {
    const [rev, token] = await command(key, revision, randomUUID());
    return { revision: Number(rev), token };
  };
  return {
    async publish(revision) {
      try {
        await mark(revision);
      } catch (err) {
        log.warn(
          { err: (err as Error).message, revision },
          "revision not published; the change waits out the PDPs' trust",
        );
        throw err;
      }
    },
    read: () => mark(0),
    trustMs: FEED_TRUST_MS,
    close: async () => void redis.disconnect(),
  };
}

/** The feed's key: the database's own feed id (migration 013), so databases sharing a Redis have separate feeds. */
const feedKey = async (knex: Knex) =>
  `pdp-revision:${(await knex('pdp_revision').first<{ feed_id: string }>('feed_id'))!.feed_id}`;

/** Each database's feed: the services of one process that share a database share its feed. */
const feeds = new WeakMap<Database, RevisionFeed | undefined>();

/**
 * The feed of a migrated database, published to by every change made through it: Redis when REDIS_URL is set (every
 * process of the deployment must then have it, docs/operations.md), memory when the database is embedded (only this
 * process can open it). None otherwise: several processes may share a PostgreSQL with no common feed, so the PDP reads
 * the revision from the database on every batch, as before the feed.
 */
export async function openRevisionFeed(
  db: Database,
  config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER'>,
  log: Logger,
  telemetry?: Pick<Telemetry, 'redisErrors'>,
): Promise<RevisionFeed | undefined> {
  if (feeds.has(db)) return feeds.get(db);
  let feed: RevisionFeed | undefined;
  if (config.REDIS_URL) {
    const redis = (await connectRedis(config.REDIS_URL, log, telemetry, config.REDIS_CLUSTER))!;
    feed = redisFeed(redis, await feedKey(db.knex), log);
  } else if (db.embedded) feed = inProcessFeed();
  if (feed) db.publishRevisionsTo(feed);
  feeds.set(db, feed);
  return feed;
}
