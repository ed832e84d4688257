// Expired issuer records are purged in bounded batches; live rows and rows without expiry stay.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { migrate, type Database } from '../common/db.js';
import { purgeExpired } from '../issuer/purge.js';
import { freshDatabase } from './support/database.js';

let db: Database;
beforeAll(async () => {
  db = await freshDatabase();
  await migrate(db.knex);
});
afterAll(async () => {
  await db?.close();
});

const HOUR = 3600_000;
const row = (model: string, id: string, expiresInMs: number | null) => ({
  model, id, payload: JSON.stringify({}), expires_at: expiresInMs === null ? null : new Date(Date.now() + expiresInMs),
});
const ids = async () => (await db.knex('oidc_payloads').orderBy('id').pluck('id')) as string[];

describe('purging expired issuer records', () => {
  it('deletes only expired rows, at most batchSize × maxBatches per run, and reports how many', async () => {
    await db.knex('oidc_payloads').insert([
      ...['c1', 'c2', 'c3'].map((id) => row('AuthorizationCode', id, -HOUR)),
      ...['r1', 'r2'].map((id) => row('RefreshToken', id, -2 * HOUR)),
      row('RefreshToken', 'live', HOUR),
      row('Grant', 'no-expiry', null),
    ]);
    expect(await purgeExpired(db.knex, { batchSize: 2, maxBatches: 1 })).toBe(2);
    expect(await ids()).toHaveLength(5);
    expect(await purgeExpired(db.knex, { batchSize: 2, maxBatches: 10 })).toBe(3);
    expect(await ids()).toEqual(['live', 'no-expiry']);
  });

  it('purges by the given clock: a row expires once `now` passes its expiry', async () => {
    expect(await purgeExpired(db.knex, { batchSize: 10, maxBatches: 1, now: new Date(Date.now() + 2 * HOUR) })).toBe(1);
    expect(await ids()).toEqual(['no-expiry']);
  });
});
