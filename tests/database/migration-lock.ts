// knex's migration lock on a database where two starts raced (common/db.ts, ensureMigrationBookkeeping): knex inserts
// its lock row without a lock, so two processes starting together on a fresh database could leave two rows, after
// which knex's lock could never be taken and every later start failed with "Migration table is already locked".
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { migrate, type Database } from '../../common/db.js';
import { migratedDatabase } from '../support/database.js';

describe('migration-lock', () => {
  let db: Database;
  beforeAll(async () => {
    db = await migratedDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  describe('migrating a database whose knex lock table holds two rows, as a race of two starts left it', () => {
    it('still starts (nothing pending, the lock taken and freed) and leaves exactly one unlocked row', async () => {
      await db.knex('knex_migrations_lock').insert({ is_locked: 0 });
      expect(await db.knex('knex_migrations_lock').select('is_locked')).toHaveLength(2);
      await expect(migrate(db.knex)).resolves.toBeUndefined();
      expect(await db.knex('knex_migrations_lock').select('is_locked')).toEqual([{ is_locked: 0 }]);
    });
  });
});
