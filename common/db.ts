// One knex handle on PostgreSQL: the real server when DATABASE_URL is set, otherwise embedded PGlite served over
// pglite-socket so the same `pg` driver, SQL and type parsing run in both modes.
import knexFactory, { type Knex } from 'knex';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { migrationSource } from '../infra/migrations/index.js';

export type Db = Knex;

export interface Database {
  knex: Knex;
  embedded: boolean;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** Embedded mode only: directory to keep data in; undefined = in memory. */
  dataDir?: string | undefined;
  poolMax?: number;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const knex = knexFactory({ client: 'pg', connection: opts.databaseUrl, pool: { min: 0, max: opts.poolMax ?? 10 } });
    return { knex, embedded: false, close: () => knex.destroy() };
  }
  const pglite = await PGlite.create(opts.dataDir);
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await server.start();
  // PGlite is a single backend: one pooled connection keeps transactions from wedging each other, and a short
  // acquire timeout turns a forgotten `.transacting(trx)` into an error instead of a hang.
  const knex = knexFactory({
    client: 'pg',
    connection: `postgres://postgres@${server.getServerConn()}/postgres`,
    pool: { min: 0, max: 1 },
    acquireConnectionTimeout: 5000,
  });
  return {
    knex,
    embedded: true,
    async close() {
      await knex.destroy();
      await server.stop();
      await pglite.close();
    },
  };
}

export async function migrate(knex: Knex): Promise<void> {
  await knex.migrate.latest({ migrationSource });
}

/**
 * False for text PostgreSQL cannot hold (a NUL character). Lookups by such a value can only miss, so callers treat it
 * as not found instead of letting the driver fail with a server error.
 */
export const storableText = (value: string) => !value.includes('\u0000');

/** True when the error is PostgreSQL's unique_violation. */
export const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';

interface PgConnection {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<void>;
}

/**
 * Runs a named prepared statement on a connection of knex's pool: PostgreSQL parses and plans it once per
 * connection instead of on every call. For the hottest read queries; knex itself has no prepared statements.
 */
export async function preparedQuery(knex: Knex, name: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
  const client = knex.client as unknown as PooledClient;
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name, text, values })).rows;
  } finally {
    await client.releaseConnection(connection);
  }
}
