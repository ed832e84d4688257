// A database of its own for each test suite: a throwaway database on the real PostgreSQL when DATABASE_URL is set
// (CI), otherwise an embedded PGlite on a copy of the run's migrated template directory when there is one
// (tests/support/database-setup.js), in memory when there is none.
import knexFactory from 'knex';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { migrate, openDatabase, type Database, type DatabaseOptions } from '../../common/db.js';
import { privatePostgres } from './processes.js';

/** A database of its own on the server `serverUrl` names: its URL, and `drop` to remove it (connections and all). */
export async function scratchDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `tp_test_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: serverUrl, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

export async function freshDatabase(opts: Pick<DatabaseOptions, 'idleTimeoutMs'> = {}): Promise<Database> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const scratch = await scratchDatabase(serverUrl);
    return databaseOwning(() => ({ ...opts, databaseUrl: scratch.url }), scratch.drop);
  }
  const template = process.env.TEST_EMBEDDED_DATABASE_TEMPLATE;
  if (!template) return openDatabase(opts);
  // A copy of the files (~0.2 s of CPU) and a PGlite opened on it (~0.5 s) cost half of loading the same data into
  // an in-memory PGlite (~1.3 s), and the database is then the one `npm start` runs: PGlite on a data directory.
  const copy = mkdtempSync(join(dirname(template), 'suite-'));
  return databaseOwning(
    () => {
      cpSync(template, copy, { recursive: true });
      return { ...opts, dataDir: copy };
    },
    () => rmSync(copy, { recursive: true, force: true }),
  );
}

/**
 * Opens the database `prepare` makes ready, on a place made for it alone (a scratch database, a copied directory), and
 * removes that place with `remove` when the database closes, or at once when preparing or opening fails.
 */
async function databaseOwning(prepare: () => DatabaseOptions, remove: () => unknown): Promise<Database> {
  try {
    const db = await openDatabase(prepare());
    return {
      ...db,
      async close() {
        await db.close();
        await remove();
      },
    };
  } catch (err) {
    await remove();
    throw err;
  }
}

/** A fresh database (as freshDatabase) with every migration applied. */
export async function migratedDatabase(): Promise<Database> {
  const db = await freshDatabase();
  await migrate(db.knex);
  return db;
}

/**
 * A scratch database on a real PostgreSQL server, for suites that need several sessions at once or separate
 * processes: on this machine's server (DATABASE_URL), or on the embedded defaults a private server started for the
 * suite, which `drop` also stops.
 */
export async function realPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = process.env.DATABASE_URL ? undefined : await privatePostgres();
  const scratch = await scratchDatabase(process.env.DATABASE_URL ?? server!.url);
  return {
    url: scratch.url,
    async drop() {
      await scratch.drop();
      await server?.destroy();
    },
  };
}

/** Tables whose rows are records an API write may change (not logs, metering or the issuer's own state). */
const DOMAIN_TABLES = [
  'plans',
  'capabilities',
  'tenants',
  'tenant_admin_keys',
  'clients',
  'client_secrets',
  'persons',
  'tenant_person_relationships',
  'accounts',
  'service_account_capabilities',
  'tenant_grants',
  'extensions',
  'extension_schemas',
  'person_extensions',
  'extension_record_counts',
  'sessions',
];

/** One digest of every domain record: equal digests before and after a request mean it changed no record. */
export async function domainDigest(db: Pick<Database, 'knex'>): Promise<string> {
  const union = DOMAIN_TABLES.map((t) => `select '${t}:' || md5(r::text) as row from ${t} r`).join(' union all ');
  const { rows } = await db.knex.raw(
    `select md5(coalesce(string_agg(row, ',' order by row), '')) as digest from (${union}) s`,
  );
  return rows[0].digest as string;
}
