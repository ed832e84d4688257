// Usage records (contract §1 rule 6, §8 rule 4): one row per (tenant, request id), written in batches off the request
// path. A retry with the same x-request-id hits the primary key and is not metered twice; close() flushes what is left.
import type { Knex } from 'knex';
import type { Logger } from '../common/log.js';

export interface UsageRecord {
  request_id: string;
  tenant_id: string;
  client_id: string;
  account_id: string;
  operation_id: string;
  status: number;
}

export interface UsageMeterOptions {
  batchSize: number;
  flushIntervalMs: number;
}

/** Records kept for a retry while the database is away, beyond which the oldest are dropped (and logged). */
const MAX_PENDING_BATCHES = 20;

export function usageMeter(knex: Knex, opts: UsageMeterOptions, log: Logger) {
  let batch: UsageRecord[] = [];
  let writing = 0;
  const flushing = new Set<Promise<void>>();

  async function write(rows: UsageRecord[]): Promise<void> {
    writing += rows.length;
    try {
      await knex('usage_records').insert(rows).onConflict(['tenant_id', 'request_id']).ignore();
    } catch (err) {
      const pending = [...rows, ...batch];
      batch = pending.slice(-opts.batchSize * MAX_PENDING_BATCHES);
      log.error({ err: (err as Error).message, dropped: pending.length - batch.length }, 'usage records not written; retrying with the next batch');
    } finally {
      writing -= rows.length;
    }
  }
  function flush(): Promise<void> {
    if (!batch.length) return Promise.resolve();
    const rows = batch;
    batch = [];
    const done = write(rows).finally(() => flushing.delete(done));
    flushing.add(done);
    return done;
  }
  const timer = setInterval(() => void flush(), opts.flushIntervalMs).unref();

  return {
    /** Rows recorded and not yet stored (waiting for the next flush or being written). */
    pending: (): number => batch.length + writing,
    record(row: UsageRecord): void {
      batch.push(row);
      if (batch.length >= opts.batchSize) void flush();
    },
    async close(): Promise<void> {
      clearInterval(timer);
      await Promise.all(flushing);
      await flush();
    },
  };
}
