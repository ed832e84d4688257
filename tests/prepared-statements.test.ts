// Prepared statements named after their SQL (common/db.ts runPrepared) are for fixed-shape queries. A query whose SQL
// varies with its values would leave one more statement on every pooled connection per distinct text; past a cap,
// new texts run unnamed instead, and every answer stays right.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Database } from '../common/db.js';
import { preparedQuery, runPrepared } from '../common/db.js';
import { freshDatabase } from './support/database.js';

let db: Database;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe('runPrepared', () => {
  it('prepares at most 100 distinct texts; the rest run unnamed, with right answers', async () => {
    for (let n = 0; n < 150; n++) {
      const { rows } = await runPrepared<{ v: number }>(
        db.knex,
        db.knex.select(db.knex.raw(`?::int + ${n} as v`, [1])),
      );
      expect(rows).toEqual([{ v: n + 1 }]);
    }
    const { rows } = await preparedQuery<{ n: number }>(
      db.knex,
      undefined,
      'select count(*)::int as n from pg_prepared_statements',
      [],
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
    expect(rows[0]!.n).toBeLessThanOrEqual(100);
  });
});
