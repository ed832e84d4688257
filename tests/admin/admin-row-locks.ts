// The row locks of admin changes (decisions.md "Row locks"), on a real PostgreSQL (this machine's with DATABASE_URL,
// else a private server): while one change's transaction is still open, holding every lock it took, another change
// that only references the same rows goes through; only the app's deletion waits. With FOR UPDATE on rows that stay,
// a grant replacement and an extension registration for one app each waited on the other's row, and with the app's
// deletion queued between them PostgreSQL aborted them as a deadlock (account-lifecycle's race, answered 503).
// The second connection gives up on a lock after LOCK_WAIT instead of hanging, so a wait shows as lock_not_available.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import knexFactory, { type Knex } from 'knex';
import { migrate } from '../../common/db.js';
import { createClient, deleteClient } from '../../policies/admin/clients.js';
import { registerExtension } from '../../policies/admin/extensions.js';
import { putGrant } from '../../policies/admin/grants.js';
import { createTenant } from '../../policies/admin/tenants.js';
import { realPostgresDatabase } from '../support/database.js';

describe('admin-row-locks', () => {
  const LOCK_WAIT = '3s';
  const LOCK_NOT_AVAILABLE = '55P03';

  let database: { url: string; drop(): Promise<void> };
  /** The connection whose transaction holds a change's locks. */
  let holder: Knex;
  /** Another connection, for the change made meanwhile. */
  let other: Knex;
  let tenantId: string;

  const connect = (url: string, afterConnect?: string) =>
    knexFactory({
      client: 'pg',
      connection: url,
      pool: {
        min: 0,
        max: 2,
        ...(afterConnect && {
          afterCreate: (conn: { query(sql: string, done: (err?: Error) => void): void }, done: (err?: Error) => void) =>
            conn.query(afterConnect, done),
        }),
      },
    });

  beforeAll(async () => {
    database = await realPostgresDatabase();
    holder = connect(database.url);
    other = connect(database.url, `set lock_timeout = '${LOCK_WAIT}'`);
    await migrate(holder);
    const tenant = await createTenant(holder, { label: 'locks', displayName: 'Locks', plan: 'L2' });
    if (!tenant.ok) throw new Error(tenant.error);
    tenantId = tenant.value.tenantId;
  }, 120_000);

  afterAll(async () => {
    await holder?.destroy();
    await other?.destroy();
    await database?.drop();
  });

  let apps = 0;
  async function newApp(): Promise<string> {
    const created = await createClient(holder, tenantId, {
      slug: `app-${++apps}`,
      name: 'App',
      kind: 'third_party',
      type: 'confidential',
      redirectUris: ['https://app.example/cb'],
    });
    if (!created.ok) throw new Error(created.error);
    return created.value.clientId;
  }

  const grant = (knex: Knex, clientId: string) =>
    putGrant(knex, tenantId, clientId, { capabilities: ['svc.tenant.info.read'] });
  const register = (knex: Knex, clientId: string) =>
    registerExtension(knex, clientId, { name: `ext-${++apps}`, schemas: { 1: { type: 'object' } } });

  /** Runs `held` in a transaction left open while `meanwhile` runs on the other connection; then rolls it back. */
  async function whileHeld<T>(held: (trx: Knex.Transaction) => Promise<unknown>, meanwhile: () => Promise<T>) {
    const trx = await holder.transaction();
    try {
      expect(await held(trx)).toMatchObject({ ok: true });
      return await meanwhile().then(
        (value) => ({ value }),
        (err: { code?: string }) => ({ error: err.code }),
      );
    } finally {
      await trx.rollback();
    }
  }

  describe('an admin change holding its locks', () => {
    it('an extension registration (tenant row held) does not hold up a grant to the same app', async () => {
      const app = await newApp();
      const outcome = await whileHeld(
        (trx) => register(trx, app),
        () => grant(other, app),
      );
      expect(outcome).toEqual({ value: { ok: true, value: expect.objectContaining({ clientId: app }) } });
    });

    it('a grant replacement (client row held) does not hold up an extension registration for the same app', async () => {
      const app = await newApp();
      const outcome = await whileHeld(
        (trx) => grant(trx, app),
        () => register(other, app),
      );
      expect(outcome).toEqual({ value: { ok: true, value: expect.objectContaining({ name: expect.any(String) }) } });
    });

    it("the app's deletion still waits for a grant replacement in progress", async () => {
      const app = await newApp();
      const outcome = await whileHeld(
        (trx) => grant(trx, app),
        () => deleteClient(other, app),
      );
      expect(outcome).toEqual({ error: LOCK_NOT_AVAILABLE });
    });
  });
});
