// Fixed statements (common/db.ts fixedStatement): built and compiled with knex once, then run as a prepared statement
// with each call's values. Every call must get the answer its own values give, the query's own values must stay, and a
// builder that does anything to an argument but bind it must be refused rather than compiled into a wrong query.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Database } from '../../common/db.js';
import { fixedStatement, preparedQuery } from '../../common/db.js';
import { freshDatabase } from '../support/database.js';

describe('prepared-statements', () => {
  let db: Database;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  const preparedTexts = async () => {
    const { rows } = await preparedQuery<{ statement: string }>(
      db.knex,
      undefined,
      'select statement from pg_prepared_statements',
      [],
    );
    return rows.map((r) => r.statement);
  };

  describe('fixedStatement', () => {
    it("builds the query once and answers each call with that call's values, the query's own values kept", async () => {
      let built = 0;
      const sum = fixedStatement<[string, number], { v: number; label: string }>((knex, label, n) => {
        built++;
        return knex.select(knex.raw('?::int + ?::int + ?::int as v, ?::text as label', [n, 10, n, label]));
      });
      for (const n of [1, 2, 3])
        expect((await sum(db.knex, `call ${n}`, n)).rows).toEqual([{ v: 2 * n + 10, label: `call ${n}` }]);
      expect(built).toBe(1);
      // One prepared statement on the connection for the three calls.
      expect((await preparedTexts()).filter((t) => t.includes('as v, $4::text as label'))).toHaveLength(1);
    });

    it('binds null and dates as they are', async () => {
      const echo = fixedStatement<[Date | null], { at: Date | null }>((knex, at) =>
        knex.select(knex.raw('?::timestamptz as at', [at])),
      );
      const at = new Date('2026-11-27T02:00:00Z');
      expect((await echo(db.knex, at)).rows).toEqual([{ at }]);
      expect((await echo(db.knex, null)).rows).toEqual([{ at: null }]);
    });

    it('refuses a builder that changes an argument instead of binding it', async () => {
      const upper = fixedStatement<[string]>((knex, s) => knex.select(knex.raw('?::text as v', [s.toUpperCase()])));
      await expect(upper(db.knex, 'a')).rejects.toThrow('argument 0 is not a value of the query');
    });
  });
});
