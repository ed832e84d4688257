// Usernames are unique per tenant (issue 20, finding 10): a tenant may create a person whose username another tenant
// already uses, without learning that it does; each person signs in to their own tenant's apps with their own
// password; the same name twice in one tenant is still 409. A name is the same in any case (issue 30: PRECIS
// UsernameCaseMapped, common/usernames.ts): `Casey` and `casey` are one person, who signs in typing either; migration
// 010 keeps accounts whose names already collided, the oldest owning the name and the others their exact spelling.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { migrationSource } from '../../common/migrations/index.js';
import { openDatabase, type Database } from '../../common/db.js';
import { hashSecret } from '../../common/secrets.js';
import { limiterStore } from '../../common/rate-limit-store.js';
import { credentialThrottle } from '../../common/credential-throttle.js';
import { signIn } from '../../issuer/accounts.js';
import { scratchDatabase } from '../support/database.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { authorizationRequest, discover, obtainTokens } from '../support/oauth.js';
import { callApi } from '../support/api.js';

describe('usernames-per-tenant', () => {
  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  let a: TenantSetup;
  let b: TenantSetup;

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    admin = adminClient(system);
    [a, b] = [await setupTenant(admin), await setupTenant(admin)];
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const personOf = async (tenant: TenantSetup, person: { username: string; password: string }) => {
    const tokens = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, person, 'svc.profile.self.read');
    return (await callApi(system.baseUrl, 'getMe', '/me', tokens.access_token)).body.subjectId as string;
  };

  /** The status of the login form of a fresh authorization request of `tenant`'s app, posted with `person`. */
  async function loginStatus(tenant: TenantSetup, person: { username: string; password: string }): Promise<number> {
    const config = await discover({ authUrl: system.authUrl, ...tenant });
    const request = await authorizationRequest(config, tenant.redirectUri, 'svc.profile.self.read');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(request.url.toString());
      const action = await page.locator('form').getAttribute('action');
      const res = await page.request.post(new URL(action!, system.authUrl).toString(), {
        form: person,
        maxRedirects: 0,
      });
      return res.status();
    } finally {
      await context.close();
    }
  }

  describe('usernames per tenant', () => {
    it(
      'lets another tenant create a person with a taken username, ' + 'and each signs in to their own tenant only',
      async () => {
        const twin = { username: a.username, password: 'a different long password' };
        const created = await admin.checked('createPerson', 'POST', `/tenants/${b.tenantId}/persons`, {
          displayName: 'Twin',
          ...twin,
        });
        expect(created.status).toBe(201);
        // Each tenant's app signs in its own person under the same name, with that person's password.
        expect(await personOf(a, a)).toBe(a.personId);
        expect(await personOf(b, twin)).toBe(created.body.personId);
        // A's password does not open B's person: B's login page fails as for a wrong password.
        expect(await loginStatus(b, a)).toBe(401);
        // Connected apps has no tenant: each signs in with their own password (the one account it matches).
        for (const person of [a, twin]) {
          const res = await fetch(`${system.authUrl}/account/apps`, {
            method: 'POST',
            redirect: 'manual',
            body: new URLSearchParams(person),
          });
          expect(res.status).toBe(303);
        }
      },
    );

    it('still refuses the same username twice in one tenant with 409', async () => {
      const again = await admin.checked('createPerson', 'POST', `/tenants/${a.tenantId}/persons`, {
        displayName: 'Again',
        username: a.username,
        password: 'long enough password',
      });
      expect(again.status).toBe(409);
      expect(again.body.error).toBe('already_exists');
    });
  });

  describe('one person per username, whatever its case', () => {
    const name = `Casey-${Date.now().toString(36)}`;
    const casey = { username: name, password: 'casey long password' };
    let caseyId: string;
    beforeAll(async () => {
      const created = await admin.checked('createPerson', 'POST', `/tenants/${a.tenantId}/persons`, {
        displayName: 'Casey',
        ...casey,
      });
      expect(created.status).toBe(201);
      caseyId = created.body.personId;
    });

    it.each([
      ['lower case', name.toLowerCase()],
      ['upper case', name.toUpperCase()],
      ['fullwidth letters', name.replace(/[A-Za-z]/g, (c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0))],
    ])('refuses the name again in %s with 409 already_exists', async (_how, username) => {
      const again = await admin.checked('createPerson', 'POST', `/tenants/${a.tenantId}/persons`, {
        displayName: 'Another Casey',
        username,
        password: 'another long password',
      });
      expect({ status: again.status, error: again.body.error }).toEqual({ status: 409, error: 'already_exists' });
    });

    it('lets another tenant have the name in another case', async () => {
      const other = await admin.checked('createPerson', 'POST', `/tenants/${b.tenantId}/persons`, {
        displayName: 'Casey of B',
        username: name.toLowerCase(),
        password: 'b casey long password',
      });
      expect(other.status).toBe(201);
    });

    it('signs the person in at the authorize step typed in any case', async () => {
      expect(await personOf(a, { ...casey, username: name.toUpperCase() })).toBe(caseyId);
      expect(await loginStatus(a, { ...casey, username: name.toLowerCase() })).toBe(303);
    });

    it('signs the person in to connected apps typed in any case', async () => {
      const res = await fetch(`${system.authUrl}/account/apps`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ ...casey, username: name.toUpperCase() }),
      });
      expect(res.status).toBe(303);
    });
  });

  describe('migration 010 on usernames that collide once folded', () => {
    let db: Database;
    let drop: (() => Promise<void>) | undefined;
    const T1 = 'ten_01j00000000000000000000001';
    const T2 = 'ten_01j00000000000000000000002';
    /** Accounts in creation order: three spellings of one name in T1, a fourth that is not the same, one in T2. */
    const ACCOUNTS = [
      { id: 'acc_01j00000000000000000000001', tenant: T1, username: 'Casey', password: 'first casey password' },
      { id: 'acc_01j00000000000000000000002', tenant: T1, username: 'casey', password: 'second casey password' },
      { id: 'acc_01j00000000000000000000003', tenant: T1, username: 'ＣＡＳＥＹ', password: 'third casey password' },
      { id: 'acc_01j00000000000000000000004', tenant: T1, username: 'Caséy', password: 'fourth casey password' },
      { id: 'acc_01j00000000000000000000005', tenant: T2, username: 'CASEY', password: 'other tenant password' },
    ];
    const personOfAccount = (id: string) => id.replace('acc_', 'psn_');

    beforeAll(async () => {
      if (process.env.DATABASE_URL) {
        const scratch = await scratchDatabase(process.env.DATABASE_URL);
        drop = scratch.drop;
        db = await openDatabase({ databaseUrl: scratch.url });
      } else {
        db = await openDatabase({});
      }
      const { knex } = db;
      const all = await migrationSource.getMigrations([]);
      for (const name of all.slice(0, all.indexOf('010_records_ceiling_and_folded_usernames')))
        await knex.migrate.up({ migrationSource, name });
      await knex('tenants').insert([T1, T2].map((id) => ({ id, label: id, display_name: id, plan: 'L2' })));
      for (const [i, account] of ACCOUNTS.entries()) {
        const personId = personOfAccount(account.id);
        await knex('persons').insert({ id: personId, display_name: account.username });
        await knex('tenant_person_relationships').insert({ tenant_id: account.tenant, person_id: personId });
        await knex('accounts').insert({
          id: account.id,
          tenant_id: account.tenant,
          kind: 'person',
          person_id: personId,
          username: account.username,
          password_hash: await hashSecret(account.password),
          created_at: new Date(Date.UTC(2026, 0, 1 + i)),
        });
      }
    });
    afterAll(async () => {
      await db?.close();
      await drop?.();
    });

    it('runs, gives each folded name to the oldest account of its tenant, and merges or drops nothing', async () => {
      await db.knex.migrate.latest({ migrationSource });
      const rows = await db.knex('accounts').orderBy('id').select('id', 'username', 'username_folded');
      expect(rows).toEqual([
        { id: ACCOUNTS[0]!.id, username: 'Casey', username_folded: 'casey' },
        { id: ACCOUNTS[1]!.id, username: 'casey', username_folded: null },
        { id: ACCOUNTS[2]!.id, username: 'ＣＡＳＥＹ', username_folded: null },
        { id: ACCOUNTS[3]!.id, username: 'Caséy', username_folded: 'caséy' },
        { id: ACCOUNTS[4]!.id, username: 'CASEY', username_folded: 'casey' },
      ]);
    });

    it('signs the owner in typed in any other case and each later account with its exact spelling only', async () => {
      const throttle = credentialThrottle(limiterStore(undefined), `migration-${Date.now()}`);
      const attempt = async (tenantId: string, username: string, password: string) => {
        const result = await signIn(db.knex, throttle, { username, password, address: '127.0.0.1', tenantId });
        return result.ok ? result.value : result.error;
      };
      const [owner, second, third] = ACCOUNTS;
      // Typed exactly as a later account is spelled, the name is that account's; in any other case, the owner's.
      for (const typed of ['Casey', 'CASEY', 'cAsEy', 'ｃａｓｅｙ'])
        expect({ typed, as: await attempt(T1, typed, owner!.password) }).toEqual({
          typed,
          as: personOfAccount(owner!.id),
        });
      expect(await attempt(T1, 'casey', second!.password)).toBe(personOfAccount(second!.id));
      expect(await attempt(T1, 'Casey', second!.password)).toBe('forbidden');
      expect(await attempt(T1, 'ＣＡＳＥＹ', third!.password)).toBe(personOfAccount(third!.id));
      expect(await attempt(T1, 'CASEY', third!.password)).toBe('forbidden');
    });

    it('refuses a new account under any spelling of a folded name the migration kept', async () => {
      const insert = (id: string, username: string) =>
        db
          .knex('accounts')
          .insert({ id, tenant_id: T1, kind: 'person', username, username_folded: username.toLowerCase() });
      await expect(insert('acc_01j00000000000000000000009', 'cASEY')).rejects.toMatchObject({ code: '23505' });
    });
  });
});
