// Background removal of expired issuer records (oidc_payloads: codes, refresh tokens, grants, sessions,
// interactions). Lookups already ignore expired rows; this keeps the table from growing. Each batch is one short
// statement that skips rows another transaction holds (SKIP LOCKED), so the token endpoint never waits on it.
import type { Knex } from 'knex';
import type { Logger } from '../common/log.js';

export interface PurgeOptions {
  batchSize: number;
  /** Upper bound of batches per run, so one run cannot monopolise the database after a long outage. */
  maxBatches: number;
  now?: Date;
}

const BATCH_SQL = `delete from oidc_payloads where (model, id) in (
  select model, id from oidc_payloads where expires_at < ? order by expires_at limit ? for update skip locked)`;

/** Deletes expired rows in batches; resolves to the number deleted. */
export async function purgeExpired(knex: Knex, { batchSize, maxBatches, now = new Date() }: PurgeOptions): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const result = await knex.raw(BATCH_SQL, [now, batchSize]);
    const deleted = (result as { rowCount: number }).rowCount;
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}

export const PURGE_EVERY_MS = 5 * 60 * 1000;
const PURGE_LIMITS = { batchSize: 500, maxBatches: 20 };

/** Runs purgeExpired every PURGE_EVERY_MS (never overlapping, not keeping the process alive); returns the stopper. */
export function schedulePurge(knex: Knex, log: Logger): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = purgeExpired(knex, PURGE_LIMITS)
      .then((n) => n && log.debug({ deleted: n }, 'purged expired issuer records'))
      .catch((err) => log.warn({ err }, 'purging expired issuer records failed; will retry'));
  }, PURGE_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
