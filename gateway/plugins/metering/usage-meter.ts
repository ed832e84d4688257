// Usage records (contract §1 rule 6, §8 rule 4): one row per metered call, written in batches off the request path.
// x-request-id is the idempotency key for retries, not a licence to reuse it: a call is a retry, and not metered
// again, only when it repeats the same request (client, subject, method, path, body) under the same caller-sent id
// within RETRY_WINDOW, at most ALLOWED_REPLAYS times; anything else is metered as the call it is (docs/decisions.md
// "Metering"). A failed write keeps its rows for the next flush (usage is billing data); close() flushes what is left.
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../../../common/log.js';
import { batchWriter, type BatchWriter } from '../../../common/batch-writer.js';
import type { RedisClient } from '../../../common/rate-limit-store.js';
import { sightingsIn } from './retry-sightings.js';

export interface UsageRecord {
  request_id: string;
  tenant_id: string;
  client_id: string;
  account_id: string;
  operation_id: string;
  status: number;
}

/** What makes two calls the same request: a retry repeats all of it. */
export interface CallIdentity {
  tenantId: string;
  requestId: string;
  /** False when the gateway made the id: it is new, so the call cannot be a retry. */
  requestIdFromCaller: boolean;
  clientId: string;
  subject: string;
  method: string;
  path: string;
  /** The request body as read by the body-limit plugin; absent for methods without one. */
  body: Buffer | undefined;
}

export interface UsageMeterOptions {
  batchSize: number;
  flushIntervalMs: number;
}

export interface UsageMeter {
  /** Meters the answered call unless it is a retry of one already metered. */
  meter(call: CallIdentity, record: Omit<UsageRecord, 'request_id' | 'tenant_id'>): Promise<void>;
  pending(): number;
  close(): Promise<void>;
}

/** How long a request id stays a retry of the request first sent with it (SDKs retry within seconds to minutes). */
const RETRY_WINDOW_S = 600;
/** Repeats of one request under one id that are not metered; the next ones are metered as new calls. */
export const ALLOWED_REPLAYS = 3;
/** Batches kept for a retry while the database is away, beyond which the oldest rows are dropped (and logged). */
const MAX_PENDING_BATCHES = 20;

const fingerprint = (c: CallIdentity) => {
  const hash = createHash('sha256');
  for (const part of [c.clientId, c.subject, c.method, c.path]) hash.update(part).update('\0');
  if (c.body) hash.update(c.body);
  return hash.digest('base64url');
};

/** Repeats of a request under one id are counted in `redis` when given (retry-sightings.ts), else in this process. */
export function usageMeter(
  knex: Knex,
  redis: RedisClient | undefined,
  opts: UsageMeterOptions,
  log: Logger,
): UsageMeter {
  const sightings = sightingsIn(redis, RETRY_WINDOW_S, 1 + ALLOWED_REPLAYS);
  const writer: BatchWriter<UsageRecord & { call_id: string }> = batchWriter(
    {
      name: 'metering',
      // A batch stored by a write that still reported a failure comes back with the same call ids: stored once.
      write: (rows) => knex('usage_records').insert(rows).onConflict(['tenant_id', 'call_id']).ignore(),
      ...opts,
      onFailure: 'retry',
      maxPending: opts.batchSize * MAX_PENDING_BATCHES,
    },
    log,
  );
  /**
   * The 1-based count of this request under this id in its window; past the allowance, more than 1 + ALLOWED_REPLAYS.
   */
  const sighting = (call: CallIdentity) => sightings.count(`${call.tenantId}:${call.requestId}:${fingerprint(call)}`);

  const store = (call: CallIdentity, record: Omit<UsageRecord, 'request_id' | 'tenant_id'>) =>
    writer.record({ ...record, request_id: call.requestId, tenant_id: call.tenantId, call_id: randomUUID() });
  /** Calls waiting for their count, so that close() stores them too. */
  const counting = new Set<Promise<void>>();

  return {
    meter(call, record) {
      if (!call.requestIdFromCaller) return Promise.resolve(store(call, record));
      const counted = sighting(call)
        .then((n) => {
          if (n === 1 || n > 1 + ALLOWED_REPLAYS) store(call, record);
        })
        .finally(() => counting.delete(counted));
      counting.add(counted);
      return counted;
    },
    pending: () => writer.pending() + counting.size,
    async close() {
      await Promise.all(counting);
      await writer.close();
    },
  };
}
