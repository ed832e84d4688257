// One knex handle on PostgreSQL: the real server when DATABASE_URL is set, otherwise embedded PGlite served over
// pglite-socket so the same `pg` driver, SQL and type parsing run in both modes. The embedded server listens on a Unix
// socket in a directory only this process's user can open (issue 20: on a TCP port, any local process could connect
// as `postgres` and read the signing key); real PostgreSQL connections carry statement and idle-transaction timeouts.
import knexFactory, { type Knex } from 'knex';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { migrationSource } from './migrations/index.js';
import { ConfigError, withoutPassword, type Config } from './config.js';

export type Db = Knex;

export interface Database {
  knex: Knex;
  embedded: boolean;
  /**
   * From now on, every statement through this handle whose commit advanced the PDP's revision publishes that revision
   * before it completes: the change is acknowledged only once the PDPs' feed holds it, or once no PDP can any longer
   * trust the feed for facts older than it (common/revision-feed.ts). Closed with the database.
   */
  publishRevisionsTo(publisher: RevisionPublisher): void;
  close(): Promise<void>;
}

/** Where the revisions that changes commit go before the changes are acknowledged (common/revision-feed.ts). */
export interface RevisionPublisher {
  publish(revision: number): Promise<void>;
  /** How long a PDP trusts the feed after reading the database's revision: a failed publication waits this long. */
  trustMs: number;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** Embedded mode only: directory to keep data in; undefined = in memory. */
  dataDir?: string | undefined;
  poolMax?: number;
  /** How long an unused pooled connection is kept before it is closed (tarn's default: 30 s). */
  idleTimeoutMs?: number;
  /** Real PostgreSQL only: statement_timeout and idle_in_transaction_session_timeout of every connection; 0 = none. */
  statementTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
}

/** The embedded server's socket is `.s.PGSQL.5432` in a new directory that mkdtemp creates with mode 0700. */
const SOCKET_PORT = 5432;

/**
 * knex's own log. Its "Acquire connection error" warning prints, with a stack, an error that knex also throws to the
 * caller, who reports it (a start as the one line naming DATABASE_URL, a request as its 503 and log line): it is left
 * out. Any other warning (deprecations) is printed as knex prints it.
 */
const KNEX_LOG = {
  warn(message: unknown) {
    if (!String(message).startsWith('Acquire connection error')) console.warn(message);
  },
};

/** The database a service opens from its settings. */
export const databaseOptions = (config: Config): DatabaseOptions => ({
  databaseUrl: config.DATABASE_URL,
  dataDir: config.PGLITE_DATA_DIR,
  statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
});

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  const idle =
    opts.idleTimeoutMs === undefined
      ? {}
      : { idleTimeoutMillis: opts.idleTimeoutMs, reapIntervalMillis: Math.min(opts.idleTimeoutMs, 1000) };
  if (opts.databaseUrl) {
    // pg sends both as startup parameters, so they hold from the connection's first statement.
    const connection = {
      connectionString: opts.databaseUrl,
      ...(opts.statementTimeoutMs && { statement_timeout: opts.statementTimeoutMs }),
      ...(opts.idleInTransactionTimeoutMs && { idle_in_transaction_session_timeout: opts.idleInTransactionTimeoutMs }),
    };
    const relay = revisionRelay();
    const knex = knexFactory({
      client: 'pg',
      connection,
      pool: { min: 0, max: opts.poolMax ?? 10, ...idle, afterCreate: relay.watch },
      log: KNEX_LOG,
    });
    await reachable(knex, opts.databaseUrl);
    return { knex, embedded: false, publishRevisionsTo: relay.to, close: () => relay.closing(knex.destroy()) };
  }
  const pglite = opts.dataDir === undefined ? await PGlite.create(PGLITE_OPTIONS) : await openPglite(opts.dataDir);
  const socketDir = mkdtempSync(join(tmpdir(), 'tpi-db-'));
  const server = new PGLiteSocketServer({
    db: pglite,
    path: join(socketDir, `.s.PGSQL.${SOCKET_PORT}`),
    maxConnections: 4,
  });
  try {
    await server.start();
  } catch (err) {
    rmSync(socketDir, { recursive: true, force: true });
    throw err;
  }
  // PGlite is a single backend: one pooled connection keeps transactions from wedging each other, and a short
  // acquire timeout turns a forgotten `.transacting(trx)` into an error instead of a hang.
  const relay = revisionRelay();
  const knex = knexFactory({
    client: 'pg',
    connection: { host: socketDir, port: SOCKET_PORT, user: 'postgres', database: 'postgres' },
    pool: {
      min: 0,
      max: 1,
      ...idle,
      afterCreate: (c: PgClient, done: AfterCreateDone) => startFreshSession(c, (err) => relay.watch(c, done, err)),
    },
    acquireConnectionTimeout: 5000,
    log: KNEX_LOG,
  });
  return {
    knex,
    embedded: true,
    publishRevisionsTo: relay.to,
    async close() {
      await relay.closing(knex.destroy());
      await server.stop();
      await pglite.close();
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/**
 * One statement at open, so a server that cannot be reached, a refused login or a missing database stops the start
 * with one line naming DATABASE_URL (its password hidden) instead of a stack trace at the first migration.
 */
async function reachable(knex: Knex, databaseUrl: string): Promise<void> {
  try {
    await knex.raw('select 1');
  } catch (err) {
    await knex.destroy();
    const { code, message } = err as { code?: string; message?: string };
    throw new ConfigError(
      `DATABASE_URL=${withoutPassword(databaseUrl)}: ` +
        `cannot connect (${code ?? 'error'}: ${(message ?? String(err)).split('\n')[0]}); ` +
        'check that PostgreSQL runs there and accepts this user and database',
    );
  }
}

/**
 * PGlite keeps ONE session for every socket connection, so a new connection (after the pool closed an idle one, or
 * after one was lost) inherits the last one's prepared statements, settings, temporary tables, advisory locks and
 * listeners, while the `pg` driver on the new connection believes it starts clean: re-preparing a named statement
 * then fails with "already exists". DISCARD ALL makes the session as fresh as a new PostgreSQL backend.
 * (pglite-socket itself rolls back a transaction left open by a connection that went away.)
 */
function startFreshSession(connection: PgClient, done: (err: Error | null) => void) {
  connection.query('DISCARD ALL', (err: Error | null) => done(err));
}

/** A `pg` client as knex's pool hands it over, with what the revision relay uses of it. */
interface PgClient {
  query(...args: any[]): any;
  on(event: 'notice', listener: (msg: { message?: string }) => void): void;
}
type AfterCreateDone = (err: Error | null, connection: PgClient) => void;

/** Added to the PDPs' trust period when a failed publication is waited out (clocks of different processes). */
const TRUST_MARGIN_MS = 50;

/** The message migration 013's pdp_note_change sends the writer. */
const REVISION_MESSAGE = /^pdp_revision (\d+)$/;

/**
 * Watches each connection of a pool for the revisions its statements commit, and holds back the completion of such a
 * statement until the publisher (once there is one) has the revision. PostgreSQL sends the message before the
 * statement's end on the same connection, so it is seen before the statement's result is handed back; `pg` runs one
 * statement at a time per connection, so it belongs to that statement. A publication that fails (Redis away) holds the
 * statement back until every PDP's trust in the feed from before this commit has run out: a PDP then reads the
 * database's revision, which holds the change, before it decides from memory again. The change stays available, one
 * trust period slower, and is never acknowledged while a decision could lack it.
 */
function revisionRelay() {
  let publisher: RevisionPublisher | undefined;
  const watch = (connection: PgClient, done: AfterCreateDone, err: Error | null = null) => {
    let committed = 0;
    connection.on('notice', ({ message }) => {
      const revision = REVISION_MESSAGE.exec(message ?? '');
      if (revision) committed = Math.max(committed, Number(revision[1]));
    });
    const query = connection.query.bind(connection);
    connection.query = (config: any, values?: any, callback?: any) => {
      if (typeof values === 'function') [values, callback] = [undefined, values];
      // A submittable (a cursor or a stream) only reads; knex's statements and preparedQuery's are plain configs.
      if (typeof config?.submit === 'function') return query(config, values, callback);
      const settled = (query(config, values) as Promise<unknown>).then(
        async (result) => {
          const revision = committed;
          committed = 0;
          if (revision && publisher) {
            const { trustMs } = publisher;
            // A little over the trust period: the PDPs measure it on their own clocks.
            await publisher.publish(revision).catch(() => sleep(trustMs + TRUST_MARGIN_MS));
          }
          return result;
        },
        (failure) => {
          committed = 0;
          throw failure;
        },
      );
      if (!callback) return settled;
      settled.then((result) => callback(null, result), callback);
    };
    done(err, connection);
  };
  return {
    watch,
    to: (p: RevisionPublisher) => void (publisher = p),
    /** Closes the publisher once the pool is closed (no statement can publish after). */
    closing: async (destroyed: Promise<void>) => (await destroyed, await publisher?.close()),
  };
}

/**
 * mkdir -p, one level at a time: Node 20's `mkdirSync(dir, { recursive: true })` never returns for some paths that
 * cannot be created (seen with /proc/x), where this fails with the system's error.
 */
function makeDirectory(dir: string): void {
  if (existsSync(dir)) return;
  if (dirname(dir) !== dir) makeDirectory(dirname(dir));
  mkdirSync(dir);
}

/** The extensions the migrations create on PGlite as on PostgreSQL: pg_trgm serves the person search (migration 015). */
const PGLITE_OPTIONS: PGliteOptions = { extensions: { pg_trgm } };

/**
 * Opens the embedded database in `dataDir`. The directory (and its parents) is created when absent; an
 * existing one must be empty or a PGlite data directory, so a mistyped path never fills some other directory with
 * database files. Each failure is one line naming the path and the setting.
 */
async function openPglite(dataDir: string): Promise<PGlite> {
  const refuse = (why: string) => new ConfigError(`PGLITE_DATA_DIR=${dataDir}: ${why}`);
  let entries: string[];
  try {
    makeDirectory(dataDir);
    entries = readdirSync(dataDir);
  } catch (err) {
    throw refuse(`cannot create or read the directory (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (entries.length > 0 && !entries.includes('PG_VERSION'))
    throw refuse('not a PGlite data directory (it is not empty and has no PG_VERSION); use an empty or new directory');
  try {
    return await PGlite.create(dataDir, PGLITE_OPTIONS);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : 'the database in it cannot be opened';
    throw refuse(`cannot open the embedded database (${reason || 'unreadable data'})`);
  }
}

/**
 * Applies the pending migrations. Processes starting together on a fresh database race: knex's bookkeeping tables are
 * created one process at a time first (ensureMigrationBookkeeping), and knex holds its lock row while migrating
 * (the others fail with MigrationLocked). Those failures wait and retry, and then find the work done. They wait as
 * long as a migration may reasonably run on a busy server (MIGRATE_WAIT_MS), not a fixed number of tries: a start that
 * gave up while another process was still migrating would only be restarted to wait again.
 */
export async function migrate(knex: Knex): Promise<void> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      await ensureMigrationBookkeeping(knex);
      return void (await knex.migrate.latest({ migrationSource }));
    } catch (err) {
      const { code, name } = err as { code?: string; name?: string };
      // duplicate table; pg_type row
      const lostRace = name === 'MigrationLocked' || code === '42P07' || code === '23505';
      if (!lostRace || Date.now() - started > MIGRATE_WAIT_MS) throw err;
      await sleep(Math.min(250 * attempt, 2000));
    }
  }
}
const MIGRATE_WAIT_MS = 120_000;

/** Any fixed key of the PostgreSQL advisory lock that serializes the creation of knex's bookkeeping tables. */
const BOOKKEEPING_LOCK = 7_324_019_001;

/**
 * Creates knex's bookkeeping tables and its one lock row, one process at a time. knex creates them itself, but checks
 * for the lock row and inserts it without a lock: two processes starting together on a fresh database could both
 * insert one, and with two rows knex's lock (an update of the row where is_locked = 0, which must touch exactly one
 * row) can never be taken again, so every later start fails with MigrationLocked. Under a transaction's advisory lock
 * the tables are created if missing, a lock row is inserted only if there is none, and extra rows (from a database
 * started before this) are removed. The same columns as knex's own (knex/lib/migrations/migrate/table-creator.js).
 */
async function ensureMigrationBookkeeping(knex: Knex): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [BOOKKEEPING_LOCK]);
    await trx.raw(
      'create table if not exists knex_migrations ' +
        '(id serial primary key, name varchar(255), batch integer, migration_time timestamptz)',
    );
    await trx.raw('create table if not exists knex_migrations_lock (index serial primary key, is_locked integer)');
    await trx.raw(
      'insert into knex_migrations_lock (is_locked) select 0 where not exists (select 1 from knex_migrations_lock)',
    );
    await trx.raw('delete from knex_migrations_lock where index > (select min(index) from knex_migrations_lock)');
  });
}

/**
 * False for text PostgreSQL cannot hold (a NUL character). Lookups by such a value can only miss, so callers treat it
 * as not found instead of letting the driver fail with a server error.
 */
export const storableText = (value: string) => !value.includes('\u0000');

/** True when the error is PostgreSQL's unique_violation. */
export const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';

interface PgConnection {
  query(q: { name?: string; text: string; values: unknown[] }): Promise<PreparedResult>;
}
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<void>;
}
export interface PreparedResult<R = Record<string, unknown>> {
  rows: R[];
  /** Rows the statement inserted, updated, deleted or returned. */
  rowCount: number | null;
}

/**
 * Runs a named prepared statement on a connection of knex's pool: PostgreSQL parses it once per connection instead of
 * on every call, and after five executions keeps one plan when its generic plan is no dearer than a custom one (true
 * of point lookups; the decision query needed more, see migration 004). For hot queries; knex has no prepared
 * statements of its own. Without a name, the statement is parsed afresh each time.
 */
export async function preparedQuery<R = Record<string, unknown>>(
  knex: Knex,
  name: string | undefined,
  text: string,
  values: unknown[],
): Promise<PreparedResult<R>> {
  const client = knex.client as unknown as PooledClient;
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name, text, values })) as PreparedResult<R>;
  } finally {
    await client.releaseConnection(connection);
  }
}

/** A value a fixed statement takes: bound as it is (a list as a PostgreSQL array, for `= any(?)`). */
export type StatementValue = string | number | boolean | Date | null | string[];

interface CompiledStatement {
  name: string;
  text: string;
  /** Each binding of the compiled query: the index of the argument it takes, or a value of the query itself. */
  bindings: ({ arg: number } | { constant: unknown })[];
}

/** Stands for argument `i` while a fixed statement is compiled (only then: calls bind their values by position). */
const placeholder = (i: number) => `\u0000fixed statement argument ${i}\u0000`;

/**
 * A query whose SQL text does not depend on its values, built with knex once (per knex instance) and then run as a
 * prepared statement named after its text: PostgreSQL parses it once per connection, and knex's building and compiling
 * (a tenth of the issuer's CPU per token when done per call, docs/performance.md) happens once per process. `build`
 * gets placeholders for the arguments: it must put each into the query as a value, unchanged, and never branch on one
 * (compiling checks that every argument became a binding).
 */
export function fixedStatement<A extends StatementValue[], R = Record<string, unknown>>(
  build: (knex: Knex, ...args: A) => Knex.QueryBuilder | Knex.Raw,
): (knex: Knex, ...args: A) => Promise<PreparedResult<R>> {
  const compiled = new WeakMap<Knex, CompiledStatement>();
  const compile = (knex: Knex, arity: number): CompiledStatement => {
    const marks = Array.from({ length: arity }, (_, i) => placeholder(i));
    const { sql, bindings } = build(knex, ...(marks as A))
      .toSQL()
      .toNative();
    const slots = (bindings as unknown[]).map((b) => {
      const arg = marks.indexOf(b as string);
      return arg >= 0 ? { arg } : { constant: b };
    });
    const lost = marks.findIndex((_, i) => !slots.some((slot) => 'arg' in slot && slot.arg === i));
    if (lost >= 0) throw new Error(`fixedStatement: argument ${lost} is not a value of the query ${sql}`);
    return { name: `q_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`, text: sql, bindings: slots };
  };
  return async (knex, ...args) => {
    let statement = compiled.get(knex);
    if (!statement) compiled.set(knex, (statement = compile(knex, args.length)));
    const values = statement.bindings.map((slot) => ('arg' in slot ? args[slot.arg] : slot.constant));
    return preparedQuery<R>(knex, statement.name, statement.text, values);
  };
}
