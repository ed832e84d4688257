// Expired oidc-provider records (interactions, sessions, grants, codes, refresh tokens) are dead weight: the adapter
// already treats them as absent. A background loop deletes them in bounded batches so the table and its indexes stay
// the size of the live data. Each batch is one short statement that skips rows another transaction holds (SKIP
// LOCKED), so the purge never waits on, or makes wait, the token endpoint's own reads and consumes.
import type { Knex } from 'knex';
import type { Logger } from '../common/log.js';

export interface PurgeOptions {
  /** Rows per DELETE statement. */
  batchSize: number;
  /** Statements per round at most; the rest waits for the next round, so a backlog never becomes one long burst. */
  maxBatches: number;
}

/** Deletes expired rows, at most `batchSize * maxBatches` of them; returns how many went. */
export async function purgeExpired(knex: Knex, { batchSize, maxBatches }: PurgeOptions): Promise<number> {
  let purged = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const deleted = await knex('oidc_payloads')
      .whereIn(
        ['model', 'id'],
        knex('oidc_payloads')
          .select('model', 'id')
          .where('expires_at', '<', knex.fn.now())
          .limit(batchSize)
          .forUpdate()
          .skipLocked(),
      )
      .delete();
    purged += deleted;
    if (deleted < batchSize) break;
  }
  return purged;
}

/** Runs a purge round every `intervalS` seconds until stopped; a failed round is logged and retried next time. */
export function startPurging(
  knex: Knex,
  log: Logger,
  intervalS: number,
  options: PurgeOptions = { batchSize: 500, maxBatches: 20 },
) {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = purgeExpired(knex, options)
      .then((purged) => void (purged > 0 && log.info({ purged }, 'expired issuer records purged')))
      .catch((err: Error) =>
        log.warn({ err: err.message }, 'purging expired issuer records failed; next round retries'),
      );
  }, intervalS * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
