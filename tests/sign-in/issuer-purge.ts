// Expired issuer records are deleted in bounded batches; live ones, consumed-but-live ones (kept for replay
// detection) and records without an expiry stay.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Database } from '../../common/db.js';
import { purgeExpired } from '../../issuer/purge.js';
import { migratedDatabase } from '../support/database.js';

describe('issuer-purge', () => {
  let db: Database;
  beforeAll(async () => {
    db = await migratedDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  const minutesFromNow = (m: number) => new Date(Date.now() + m * 60_000);
  const row = (model: string, id: string, expiresAt: Date | null, consumedAt: Date | null = null) => ({
    model,
    id,
    payload: JSON.stringify({ kind: model }),
    grant_id: null,
    uid: null,
    expires_at: expiresAt,
    consumed_at: consumedAt,
  });

  describe('purging expired issuer records', () => {
    it('deletes every expired row in batches, at most batchSize x maxBatches a round, and nothing live', async () => {
      const expired = Array.from({ length: 250 }, (_, i) =>
        row(
          ['AuthorizationCode', 'RefreshToken', 'Grant', 'Session', 'Interaction'][i % 5]!,
          `expired-${i}`,
          minutesFromNow(-1 - i),
        ),
      );
      const live = [
        row('RefreshToken', 'live', minutesFromNow(60)),
        row('RefreshToken', 'consumed-live', minutesFromNow(60), new Date()),
        row('Grant', 'no-expiry', null),
      ];
      await db.knex.batchInsert('oidc_payloads', [...expired, ...live], 100);
      const count = async () => Number((await db.knex('oidc_payloads').count({ n: '*' }).first())!.n);

      expect(await purgeExpired(db.knex, { batchSize: 40, maxBatches: 3 })).toBe(120);
      expect(await count()).toBe(250 - 120 + 3);
      expect(await purgeExpired(db.knex, { batchSize: 40, maxBatches: 10 })).toBe(130);
      expect((await db.knex('oidc_payloads').pluck('id')).sort()).toEqual(['consumed-live', 'live', 'no-expiry']);
      expect(await purgeExpired(db.knex, { batchSize: 40, maxBatches: 10 })).toBe(0);
    });
  });
});
