// A database of its own for each test suite: a throwaway database on the real PostgreSQL when DATABASE_URL is set
// (CI), otherwise an in-memory embedded PGlite.
import knexFactory from 'knex';
import { randomBytes } from 'node:crypto';
import { openDatabase, type Database, type DatabaseOptions } from '../../common/db.js';

export async function freshDatabase(opts: Pick<DatabaseOptions, 'idleTimeoutMs'> = {}): Promise<Database> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return openDatabase(opts);
  const name = `tp_test_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ ...opts, databaseUrl: url.toString() });
  return {
    ...db,
    async close() {
      await db.close();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}
