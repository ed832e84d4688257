// Decision logs, written in batches off the request path (as OPA ships decision logs): one multi-row insert per
// flush instead of one write per decision. A failed write is logged and dropped; it never delays or flips a decision.
import type { Knex } from 'knex';
import type { Logger } from '../common/log.js';

export interface DecisionLogRow {
  request_id: string;
  tenant_id: string;
  client_id: string;
  subject: string;
  capability: string;
  allow: boolean;
  code: string | null;
  check_name: string;
}

const FLUSH_EVERY_MS = 200;
const MAX_BATCH = 500;
/** Beyond this many unwritten rows (database down), new rows are dropped rather than held in memory. */
const MAX_PENDING = 20_000;

export interface DecisionLog {
  record(row: DecisionLogRow): void;
  /** Writes what is pending; resolves when it is stored (or dropped after a failure). */
  flush(): Promise<void>;
  /** Rows recorded and not yet stored (waiting for the next flush or being written). */
  pending(): number;
  close(): Promise<void>;
}

export function batchedDecisionLog(knex: Knex, log: Logger): DecisionLog {
  let pending: DecisionLogRow[] = [];
  let inFlight = 0;
  let writing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => void flush(), FLUSH_EVERY_MS);
  timer.unref();

  function flush(): Promise<void> {
    writing = writing.then(async () => {
      while (pending.length) {
        const batch = pending.splice(0, MAX_BATCH);
        inFlight = batch.length;
        try {
          await knex('decision_logs').insert(batch);
        } catch (err) {
          log.warn({ err, rows: batch.length }, 'decision log write failed; rows dropped');
        } finally {
          inFlight = 0;
        }
      }
    });
    return writing;
  }

  return {
    record(row) {
      if (pending.length < MAX_PENDING) pending.push(row);
      if (pending.length >= MAX_BATCH) void flush();
    },
    flush,
    pending: () => pending.length + inFlight,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
