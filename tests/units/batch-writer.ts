// The batch writer under usage records and decision logs (common/batch-writer.ts): rows go out in batches of the
// configured size, one write at a time; a failed write keeps its rows (policy `retry`) or drops them (`drop`); the
// backlog is bounded, oldest first, and the drops are logged; close() writes what is left. The storage here is an
// array the test controls, so a failure can be made to happen on a given write.
import { describe, it, expect } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger } from '../../common/log.js';
import { batchWriter, type BatchWriterOptions } from '../../common/batch-writer.js';
import { waitFor } from '../support/processes.js';

describe('batch-writer', () => {
  function storage() {
    const batches: number[][] = [];
    let failures = 0;
    let concurrent = 0;
    let mostConcurrent = 0;
    return {
      batches,
      failNext(n: number) {
        failures = n;
      },
      mostConcurrent: () => mostConcurrent,
      async write(rows: number[]) {
        concurrent++;
        mostConcurrent = Math.max(mostConcurrent, concurrent);
        await new Promise((resolve) => setTimeout(resolve, 5));
        concurrent--;
        if (failures > 0) {
          failures--;
          throw new Error('database away');
        }
        batches.push(rows);
      },
    };
  }

  function capturedLog() {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    return { lines, log: createLogger('test', 'info', destination) };
  }

  const options = (
    s: ReturnType<typeof storage>,
    o: Partial<BatchWriterOptions<number>> = {},
  ): BatchWriterOptions<number> => ({
    name: 'test',
    write: (rows) => s.write(rows),
    batchSize: 3,
    flushIntervalMs: 60_000,
    onFailure: 'retry',
    maxPending: 100,
    ...o,
  });

  describe('batch writer', () => {
    it('writes a batch as soon as it is full, one write at a time, and the rest at close', async () => {
      const s = storage();
      const { log } = capturedLog();
      const writer = batchWriter(options(s), log); // its timer waits a minute: only a full batch can start a write
      for (let n = 1; n <= 3; n++) writer.record(n);
      await waitFor('a batch written', () => s.batches.length > 0, 5_000, 10);
      expect(s.batches).toEqual([[1, 2, 3]]);
      for (let n = 4; n <= 8; n++) writer.record(n);
      expect(writer.pending()).toBe(5);
      await writer.close();
      expect(s.batches).toEqual([
        [1, 2, 3],
        [4, 5, 6],
        [7, 8],
      ]);
      expect(s.mostConcurrent()).toBe(1);
      expect(writer.pending()).toBe(0);
    });

    it('joins flushes that arrive while one is waiting to run, instead of queueing a write for each', async () => {
      const s = storage();
      const writer = batchWriter(options(s), capturedLog().log);
      writer.record(1);
      const flushes = Array.from({ length: 5 }, () => writer.flush());
      expect(new Set(flushes).size).toBe(1);
      await Promise.all(flushes);
      expect(s.batches).toEqual([[1]]);
      await writer.close();
    });

    it('flushes on its timer without being full', async () => {
      const s = storage();
      const writer = batchWriter(options(s, { flushIntervalMs: 20 }), capturedLog().log);
      writer.record(1);
      // The timer's flush, not close(): polled (a busy machine may run the 20 ms timer late), close comes after.
      await waitFor('a batch written', () => s.batches.length > 0, 5_000, 10);
      expect(s.batches).toEqual([[1]]);
      await writer.close();
    });

    it('policy retry: a failed write keeps its rows, in order, for the next flush', async () => {
      const s = storage();
      const { lines, log } = capturedLog();
      const writer = batchWriter(options(s), log);
      s.failNext(1); // the write the full batch starts, which flush() joins rather than queue another
      [1, 2, 3, 4].forEach((n) => writer.record(n));
      await writer.flush();
      expect(s.batches).toEqual([]);
      expect(writer.pending()).toBe(4);
      expect(lines.some((l) => l.msg === 'batch write failed; retrying with the next flush' && l.rows === 3)).toBe(
        true,
      );
      await writer.close();
      expect(s.batches).toEqual([[1, 2, 3], [4]]);
    });

    it('policy drop: a failed write loses only its own rows', async () => {
      const s = storage();
      const { lines, log } = capturedLog();
      const writer = batchWriter(options(s, { onFailure: 'drop' }), log);
      s.failNext(1);
      [1, 2, 3, 4].forEach((n) => writer.record(n));
      await writer.close();
      expect(s.batches).toEqual([[4]]);
      expect(lines.some((l) => l.msg === 'batch write failed; rows dropped' && l.rows === 3)).toBe(true);
    });

    it('holds at most maxPending rows while writes fail, dropping the oldest and logging how many', async () => {
      const s = storage();
      const { lines, log } = capturedLog();
      const writer = batchWriter(options(s, { maxPending: 5 }), log);
      s.failNext(1);
      // a full batch: its write (which flush() joins) fails; the rows come back
      for (let n = 1; n <= 3; n++) writer.record(n);
      await writer.flush();
      for (let n = 4; n <= 9; n++) writer.record(n);
      expect(writer.pending()).toBe(5);
      await writer.close();
      expect(s.batches.flat()).toEqual([5, 6, 7, 8, 9]);
      expect(lines.find((l) => l.msg === 'batch backlog full; oldest rows dropped')?.dropped).toBe(4);
    });
  });
});
