// Usage records (contract §1 rule 6, §8 rule 4): one row per (tenant, request id), written in batches off the request
// path. A retry with the same x-request-id hits the primary key and is not metered twice. A failed write keeps its
// rows for the next flush (usage is billing data); close() flushes what is left.
import type { Knex } from 'knex';
import type { Logger } from '../common/log.js';
import { batchWriter, type BatchWriter } from '../common/batch-writer.js';

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

/** Batches kept for a retry while the database is away, beyond which the oldest rows are dropped (and logged). */
const MAX_PENDING_BATCHES = 20;

export function usageMeter(knex: Knex, opts: UsageMeterOptions, log: Logger): BatchWriter<UsageRecord> {
  return batchWriter<UsageRecord>({
    name: 'metering',
    write: (rows) => knex('usage_records').insert(rows).onConflict(['tenant_id', 'request_id']).ignore(),
    ...opts,
    onFailure: 'retry',
    maxPending: opts.batchSize * MAX_PENDING_BATCHES,
  }, log);
}
