// Rows written in batches off the request path (usage records, decision logs): one multi-row insert per flush
// instead of one write per request. Writes run one at a time, so a slow database holds rows in memory (up to
// `maxPending`, oldest dropped first and logged) rather than stacking up inserts.
import type { Logger } from './log.js';

export interface BatchWriterOptions<R> {
  /** Names the batch in logs. */
  name: string;
  write(rows: R[]): Promise<unknown>;
  batchSize: number;
  flushIntervalMs: number;
  /** What a failed write does with its rows: keep them for the next flush, or log and drop them. */
  onFailure: 'retry' | 'drop';
  maxPending: number;
}

export interface BatchWriter<R> {
  record(row: R): void;
  /** Writes what is pending; resolves when it is stored, dropped, or (policy `retry`) kept after a failure. */
  flush(): Promise<void>;
  /** Rows recorded and not yet stored (waiting for the next flush or being written). */
  pending(): number;
  /** Stops the timer and writes what is left. */
  close(): Promise<void>;
}

export function batchWriter<R>(opts: BatchWriterOptions<R>, log: Logger): BatchWriter<R> {
  let pending: R[] = [];
  let inFlight = 0;
  let writing: Promise<void> = Promise.resolve();
  /** A drain waiting behind the running one: further flushes join it rather than queue more. */
  let queued: Promise<void> | undefined;
  let dropped = 0;
  const timer = setInterval(() => void flush(), opts.flushIntervalMs).unref();

  async function drain(): Promise<void> {
    if (dropped) {
      log.error({ batch: opts.name, dropped }, 'batch backlog full; oldest rows dropped');
      dropped = 0;
    }
    while (pending.length) {
      const rows = pending.splice(0, opts.batchSize);
      inFlight = rows.length;
      try {
        await opts.write(rows);
      } catch (err) {
        if (opts.onFailure === 'drop') {
          log.warn(
            { batch: opts.name, err: (err as Error).message, rows: rows.length },
            'batch write failed; rows dropped',
          );
          continue;
        }
        log.error(
          { batch: opts.name, err: (err as Error).message, rows: rows.length },
          'batch write failed; retrying with the next flush',
        );
        const kept = [...rows, ...pending];
        const excess = Math.max(0, kept.length - opts.maxPending);
        pending = kept.slice(excess);
        dropped += excess;
        return;
      } finally {
        inFlight = 0;
      }
    }
  }

  function flush(): Promise<void> {
    queued ??= writing = writing.then(() => {
      queued = undefined;
      return drain();
    });
    return queued;
  }

  return {
    record(row) {
      if (pending.length >= opts.maxPending) {
        pending.shift();
        dropped++;
      }
      pending.push(row);
      if (pending.length === opts.batchSize) void flush();
    },
    flush,
    pending: () => pending.length + inFlight,
    async close() {
      clearInterval(timer);
      await flush();
      if (pending.length) log.error({ batch: opts.name, rows: pending.length }, 'rows not written at close');
    },
  };
}
