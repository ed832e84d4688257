// The database cannot be held by one caller or opened by an outsider (issue 20, finding 4): on PostgreSQL every
// service connection has a statement timeout and an idle-transaction timeout, so work stuck behind a lock answers 503
// within the timeout instead of holding its request; the embedded database listens on a Unix socket in a directory
// only its user can open, and on no TCP port.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../common/config.js';
import { openDatabase } from '../../common/db.js';
import { startSystem } from '../../infra/system.js';
import { adminClient } from '../support/admin.js';
import { scratchDatabase } from '../support/database.js';
import { privatePostgres } from '../support/processes.js';

describe('database-limits', () => {
  /** A PostgreSQL database of this suite's own: on the server DATABASE_URL names, else on a private server. */
  let postgres: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    if (process.env.DATABASE_URL) postgres = await scratchDatabase(process.env.DATABASE_URL);
    else {
      const server = await privatePostgres();
      postgres = { url: server.url, drop: () => server.destroy() };
    }
  });
  afterAll(async () => {
    await postgres?.drop();
  });

  describe('on PostgreSQL', () => {
    it('cancels a statement past its timeout and ends a transaction left idle past its own', async () => {
      const db = await openDatabase({
        databaseUrl: postgres.url,
        statementTimeoutMs: 300,
        idleInTransactionTimeoutMs: 300,
      });
      try {
        await expect(db.knex.raw('select pg_sleep(5)')).rejects.toMatchObject({ code: '57014' }); // query_canceled
        const trx = await db.knex.transaction();
        await trx.raw('select 1');
        await sleep(1000);
        await expect(trx.raw('select 1')).rejects.toThrow(/connection/i);
        await trx.rollback().catch(() => undefined); // hands the dead connection back to the pool, which drops it
        // The pool replaces the ended connection: the next statement works.
        expect((await db.knex.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await db.close();
      }
    });

    it(
      'answers an admin change stuck behind a held lock 503 with ' +
        'retry-after once the timeout passes, and changes nothing',
      async () => {
        const config = loadConfig({
          ...process.env,
          DATABASE_URL: postgres.url,
          DATABASE_STATEMENT_TIMEOUT_MS: '500',
          LOG_LEVEL: 'silent',
        });
        const system = await startSystem(config, { ephemeralPorts: true });
        const holder = await openDatabase({ databaseUrl: postgres.url });
        try {
          const admin = adminClient(system);
          const tenant = await admin.ok('POST', '/tenants', {
            label: `locked${Date.now().toString(36)}`,
            displayName: 'Before',
            plan: 'L1',
          });
          const lock = await holder.knex.transaction();
          await lock('tenants').where({ id: tenant.tenantId }).forUpdate().first();
          const res = await admin.checked('updateTenant', 'PATCH', `/tenants/${tenant.tenantId}`, {
            displayName: 'After',
          });
          expect({ status: res.status, error: res.body.error }).toEqual({
            status: 503,
            error: 'authorization_unavailable',
          });
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          await lock.rollback();
          expect((await system.db.knex('tenants').where({ id: tenant.tenantId }).first()).display_name).toBe('Before');
        } finally {
          await holder.close();
          await system.close();
        }
      },
    );
  });

  /** Inodes of the TCP sockets this process listens on (/proc: the fds it holds, the kernel's table of listeners). */
  function listeningTcpInodes(): Set<string> {
    const own = new Set(
      readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
          } catch {
            return undefined; // an fd closed while listing
          }
        })
        .filter((inode) => inode !== undefined),
    );
    const listening = ['/proc/net/tcp', '/proc/net/tcp6']
      .flatMap((table) => readFileSync(table, 'utf8').split('\n').slice(1))
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols[3] === '0A') // LISTEN
      .map((cols) => cols[9]!);
    return new Set(listening.filter((inode) => own.has(inode)));
  }

  describe('the embedded database', () => {
    it('listens on a Unix socket in a directory only its user can open, and on no TCP port', async () => {
      const before = listeningTcpInodes();
      const db = await openDatabase({});
      try {
        expect(listeningTcpInodes()).toEqual(before);
        const { host } = db.knex.client.config.connection as { host: string };
        expect(statSync(host).mode & 0o777).toBe(0o700);
        expect(statSync(`${host}/.s.PGSQL.5432`).isSocket()).toBe(true);
        expect((await db.knex.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await db.close();
      }
    });
  });
});
