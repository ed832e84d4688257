// The audit trail of administrative changes (platform-interfaces.md "Audit trail"): every changing admin operation
// writes exactly one entry in its own transaction (none when refused or failed), entries never hold a secret, tenant
// keys read only their tenant, the hash chain verifies and shows a tampered or removed row, concurrent changes stay
// one chain, and the console and the CLI changes and reads go through the same trail. Reads made for one answer inside
// a change take turns on its transaction's one connection.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Knex } from 'knex';
import type { System } from '../../infra/system.js';
import { main as adminCli } from '../../infra/admin-cli.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type AdminResponse, type TenantSetup } from '../support/admin.js';
import { operationsOf } from '../support/openapi.js';
import { launchBrowser } from '../support/browser.js';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { auditedChanges, reads, scopedKnex } from '../../policies/admin/audit.js';
import { createLogger } from '../../common/log.js';

describe('audit-trail', () => {
  let system: System;
  let knex: Knex;
  let operator: AdminClient;
  let tenant: TenantSetup & { clientSecret: string };
  let keyAdmin: AdminClient;
  let keyId: string;
  const secrets: string[] = [];

  type Entry = {
    id: string;
    action: string;
    tenantId: string | null;
    actor: { kind: string; keyId?: string };
    target: { type: string; id: string };
    changes?: Record<string, { from: unknown; to: unknown }>;
    requestId: string;
    ip: string;
    hash: string;
  };
  const entryCount = async () => Number((await knex('admin_audit').count({ n: '*' }))[0]!.n);
  const newest = async (): Promise<Entry> => (await operator.ok('GET', '/audit?limit=1')).items[0];
  const verify = async () => operator.ok('GET', '/audit/verify');

  beforeAll(async () => {
    system = await startTestSystem();
    knex = system.db.knex;
    operator = adminClient(system);
    tenant = (await setupTenant(operator, {
      type: 'confidential',
      capabilities: ['svc.profile.self.read'],
    })) as typeof tenant;
    const created = await operator.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`);
    ({ keyId } = created as { keyId: string });
    keyAdmin = adminClient(system, created.key as string);
    secrets.push(created.key as string, tenant.clientSecret, tenant.password);
  });
  afterAll(async () => {
    await system?.close();
  });

  interface Case {
    operationId: string;
    by: 'operator' | 'key';
    call: (admin: AdminClient) => Promise<AdminResponse>;
    action: string;
    target: (res: AdminResponse) => { type: string; id: string };
    changes?: Record<string, { from: unknown; to: unknown }>;
  }

  /** One change per changing admin operation, in an order where each has what it needs. */
  function cases(): Case[] {
    const t = () => tenant.tenantId;
    let personId = '';
    let accountId = '';
    let extensionId = '';
    let adminKeyId = '';
    let publicClient = '';
    const suffix = Date.now().toString(36);
    return [
      {
        operationId: 'createTenant',
        by: 'operator',
        call: (a) => a.call('POST', '/tenants', { label: `audit-${suffix}`, displayName: 'Audited', plan: 'L1' }),
        action: 'tenant.create',
        target: (r) => ({ type: 'tenant', id: r.body.tenantId }),
      },
      {
        operationId: 'updateTenant',
        by: 'operator',
        call: (a) => a.call('PATCH', `/tenants/${t()}`, { plan: 'L1' }),
        action: 'tenant.plan_change',
        target: () => ({ type: 'tenant', id: t() }),
        changes: { plan: { from: 'L2', to: 'L1' } },
      },
      {
        operationId: 'createTenantAdminKey',
        by: 'operator',
        call: async (a) => {
          const r = await a.call('POST', `/tenants/${t()}/admin-keys`);
          adminKeyId = r.body.keyId;
          secrets.push(r.body.key);
          return r;
        },
        action: 'admin_key.create',
        target: (r) => ({ type: 'admin_key', id: r.body.keyId }),
      },
      {
        operationId: 'revokeTenantAdminKey',
        by: 'operator',
        call: (a) => a.call('DELETE', `/tenants/${t()}/admin-keys/${adminKeyId}`),
        action: 'admin_key.revoke',
        target: () => ({ type: 'admin_key', id: adminKeyId }),
      },
      {
        operationId: 'createPerson',
        by: 'key',
        call: async (a) => {
          const r = await a.call('POST', `/tenants/${t()}/persons`, {
            displayName: 'Pat',
            username: `pat-${suffix}`,
            password: 'a secret passphrase',
          });
          personId = r.body.personId;
          secrets.push('a secret passphrase');
          return r;
        },
        action: 'person.create',
        target: (r) => ({ type: 'person', id: r.body.personId }),
      },
      {
        operationId: 'endPersonRelationship',
        by: 'key',
        call: (a) => a.call('DELETE', `/tenants/${t()}/persons/${personId}`),
        action: 'person.relationship_end',
        target: () => ({ type: 'person', id: personId }),
        changes: { relationship: { from: 'active', to: 'ended' } },
      },
      {
        operationId: 'createClient',
        by: 'key',
        call: async (a) => {
          const r = await a.call('POST', `/tenants/${t()}/clients`, {
            slug: 'audited',
            name: 'Audited',
            kind: 'third_party',
            type: 'public',
            redirectUris: ['https://a.example/cb'],
          });
          publicClient = r.body.clientId;
          return r;
        },
        action: 'client.create',
        target: (r) => ({ type: 'client', id: r.body.clientId }),
      },
      {
        operationId: 'updateClient',
        by: 'key',
        call: (a) => a.call('PATCH', `/clients/${publicClient}`, { status: 'disabled' }),
        action: 'client.disable',
        target: () => ({ type: 'client', id: publicClient }),
        changes: { status: { from: 'active', to: 'disabled' } },
      },
      {
        operationId: 'createClientSecret',
        by: 'key',
        call: async (a) => {
          const r = await a.call('POST', `/clients/${tenant.clientId}/secrets`);
          secrets.push(r.body.clientSecret);
          return r;
        },
        action: 'client_secret.create',
        target: () => ({ type: 'client', id: tenant.clientId }),
      },
      {
        operationId: 'promoteClientSecret',
        by: 'key',
        call: (a) => a.call('POST', `/clients/${tenant.clientId}/secrets/promote`),
        action: 'client_secret.promote',
        target: () => ({ type: 'client', id: tenant.clientId }),
      },
      {
        operationId: 'putGrant',
        by: 'key',
        call: (a) =>
          a.call('PUT', `/tenants/${t()}/grants/${tenant.clientId}`, {
            capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'],
          }),
        action: 'grant.replace',
        target: () => ({ type: 'grant', id: tenant.clientId }),
        changes: {
          capabilities: { from: ['svc.profile.self.read'], to: ['svc.profile.self.read', 'svc.tenant.info.read'] },
        },
      },
      {
        operationId: 'createServiceAccount',
        by: 'key',
        call: async (a) => {
          const r = await a.call('POST', `/tenants/${t()}/service-accounts`, {
            clientId: tenant.clientId,
            name: 'sync',
            capabilities: ['svc.tenant.info.read'],
          });
          accountId = r.body.accountId;
          return r;
        },
        action: 'service_account.create',
        target: (r) => ({ type: 'account', id: r.body.accountId }),
      },
      {
        operationId: 'updateAccount',
        by: 'key',
        call: (a) => a.call('PATCH', `/accounts/${accountId}`, { status: 'disabled' }),
        action: 'account.disable',
        target: () => ({ type: 'account', id: accountId }),
        changes: { status: { from: 'active', to: 'disabled' } },
      },
      {
        operationId: 'advanceAccountEpoch',
        by: 'key',
        call: (a) => a.call('POST', `/accounts/${accountId}/epoch`),
        action: 'account.epoch_advance',
        target: () => ({ type: 'account', id: accountId }),
        changes: { epoch: { from: 1, to: 2 } },
      },
      {
        operationId: 'revokeAccountSessions',
        by: 'key',
        call: (a) => a.call('POST', `/accounts/${tenant.accountId}/sessions/revoke`),
        action: 'account.sessions_revoke',
        target: () => ({ type: 'account', id: tenant.accountId }),
      },
      {
        operationId: 'createExtension',
        by: 'key',
        call: async (a) => {
          const r = await a.call('POST', `/clients/${tenant.clientId}/extensions`, {
            name: 'audited',
            schemas: { 1: { type: 'object' } },
          });
          extensionId = r.body.extensionId;
          return r;
        },
        action: 'extension.create',
        target: (r) => ({ type: 'extension', id: r.body.extensionId }),
      },
      {
        operationId: 'putExtensionSchema',
        by: 'key',
        call: (a) => a.call('PUT', `/extensions/${extensionId}/schemas/2`, { type: 'object' }),
        action: 'extension.schema_add',
        target: () => ({ type: 'extension', id: extensionId }),
        changes: { schemaVersions: { from: [1], to: [1, 2] } },
      },
      {
        operationId: 'deleteGrant',
        by: 'key',
        call: (a) => a.call('DELETE', `/tenants/${t()}/grants/${publicClient}`),
        action: 'grant.withdraw',
        target: () => ({ type: 'grant', id: publicClient }),
      },
      {
        operationId: 'deleteClient',
        by: 'key',
        call: (a) => a.call('DELETE', `/clients/${publicClient}`),
        action: 'client.delete',
        target: () => ({ type: 'client', id: publicClient }),
        changes: {
          name: { from: 'Audited', to: null },
          kind: { from: 'third_party', to: null },
          type: { from: 'public', to: null },
          status: { from: 'disabled', to: null },
        },
      },
      {
        operationId: 'updateCapability',
        by: 'operator',
        call: (a) => a.call('PATCH', '/capabilities/svc.person.read', { enabled: false }),
        action: 'capability.close',
        target: () => ({ type: 'capability', id: 'svc.person.read' }),
        changes: { enabled: { from: true, to: false } },
      },
    ];
  }

  describe('every admin change writes one entry', () => {
    const table = cases();

    it('covers every changing operation of admin-api.yaml', () => {
      const changing = operationsOf('admin')
        .filter((o) => o.method !== 'get')
        .map((o) => o.operationId)
        .sort();
      expect(table.map((c) => c.operationId).sort()).toEqual(changing);
    });

    it.each(table.map((c) => [c.operationId, c] as const))('%s', async (_id, c) => {
      const before = await entryCount();
      const res = await c.call(c.by === 'operator' ? operator : keyAdmin);
      expect(res.status).toBeLessThan(300);
      expect(await entryCount()).toBe(before + 1);
      const entry = await newest();
      expect(entry).toMatchObject({
        action: c.action,
        target: c.target(res),
        requestId: res.headers.get('x-request-id'),
        actor: c.by === 'operator' ? { kind: 'operator' } : { kind: 'tenant_admin_key', keyId },
      });
      expect(entry.ip).toMatch(/127\.0\.0\.1/);
      if (c.changes) expect(entry.changes).toEqual(c.changes);
      if (c.operationId === 'updateCapability')
        await operator.ok('PATCH', '/capabilities/svc.person.read', { enabled: true });
    });
  });

  describe('entries', () => {
    it('are written for no refused change: bad input, another tenant, an unknown object', async () => {
      const other = await setupTenant(operator);
      const before = await entryCount();
      expect((await keyAdmin.call('PATCH', `/clients/${tenant.clientId}`, { status: 'gone' })).status).toBe(422);
      expect((await keyAdmin.call('PATCH', `/clients/${other.clientId}`, { status: 'disabled' })).status).toBe(403);
      expect(
        (await operator.call('PATCH', '/accounts/acc_00000000000000000000000000', { status: 'disabled' })).status,
      ).toBe(404);
      expect(
        (await operator.call('POST', '/tenants', { label: `t${Date.now().toString(36)}`, displayName: 'x' })).status,
      ).toBe(422);
      expect(await entryCount()).toBe(before);
    });

    it('hold no secret, key or password, only that one changed', async () => {
      const all = JSON.stringify(await knex('admin_audit').select('*'));
      for (const secret of secrets) expect(all).not.toContain(secret);
      expect((await knex('admin_audit').where({ action: 'client_secret.create' }).first('changes')).changes).toEqual({
        nextSecret: { from: null, to: '[redacted]' },
      });
    });

    it('are readable by a tenant admin key for its own tenant only', async () => {
      const own = await keyAdmin.checked('listTenantAudit', 'GET', `/tenants/${tenant.tenantId}/audit?limit=100`);
      expect(own.status).toBe(200);
      expect(own.body.items.length).toBeGreaterThan(5);
      expect(own.body.items.every((e: Entry) => e.tenantId === tenant.tenantId)).toBe(true);
      const other = await setupTenant(operator);
      expect((await keyAdmin.checked('listTenantAudit', 'GET', `/tenants/${other.tenantId}/audit`)).status).toBe(403);
      expect((await keyAdmin.checked('listAudit', 'GET', '/audit')).status).toBe(403);
      expect((await keyAdmin.checked('verifyAudit', 'GET', '/audit/verify')).status).toBe(403);
      // The operator sees changes outside any tenant too.
      expect((await operator.ok('GET', '/audit?action=capability.close')).items[0].tenantId).toBeNull();
    });

    it('page newest first through a cursor, and filter by action and time', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: AdminResponse = await operator.checked(
          'listTenantAudit',
          'GET',
          `/tenants/${tenant.tenantId}/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...page.body.items.map((e: Entry) => e.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      const all = (await operator.ok('GET', `/tenants/${tenant.tenantId}/audit?limit=100`)).items.map(
        (e: Entry) => e.id,
      );
      expect(seen).toEqual(all);
      expect(all.map(Number)).toEqual([...all.map(Number)].sort((a, b) => b - a));
      const disables = await operator.ok('GET', `/tenants/${tenant.tenantId}/audit?action=client.disable`);
      expect(disables.items.map((e: Entry) => e.action)).toEqual(['client.disable']);
      expect((await operator.ok('GET', `/tenants/${tenant.tenantId}/audit?since=2999-01-01T00:00:00Z`)).items).toEqual(
        [],
      );
    });

    it("reads `since` in RFC 3339's lower-case form too (t and z)", async () => {
      const at = (since: string) => operator.ok('GET', `/tenants/${tenant.tenantId}/audit?since=${since}`);
      expect((await at('2999-01-01t00:00:00z')).items).toEqual([]);
      expect((await at('2000-01-01t00:00:00z')).items.length).toBeGreaterThan(0);
    });

    it('records the withdrawal of a grant that held nothing with no changes', async () => {
      const client = await operator.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
        slug: 'never-granted',
        name: 'Never granted',
        kind: 'third_party',
        type: 'public',
        redirectUris: ['https://app.example/cb'],
      });
      expect((await operator.call('DELETE', `/tenants/${tenant.tenantId}/grants/${client.clientId}`)).status).toBe(204);
      const [entry] = (await operator.ok('GET', `/tenants/${tenant.tenantId}/audit?action=grant.withdraw&limit=1`))
        .items;
      expect(entry).toMatchObject({ action: 'grant.withdraw', target: { type: 'grant', id: client.clientId } });
      expect(entry.changes).toBeUndefined();
    });

    it('refuse malformed queries with 422 schema_invalid', async () => {
      for (const query of [
        'limit=0',
        'limit=101',
        'limit=abc',
        'cursor=not-a-cursor',
        'since=yesterday',
        'action=Client-Disable',
        'unknown=1',
      ]) {
        const res = await operator.checked('listTenantAudit', 'GET', `/tenants/${tenant.tenantId}/audit?${query}`);
        expect({ query, status: res.status, error: res.body.error }).toEqual({
          query,
          status: 422,
          error: 'schema_invalid',
        });
      }
    });
  });

  describe('the chain', () => {
    it('stays one line under concurrent changes from several callers', async () => {
      const before = await entryCount();
      // Changes of different objects (no row lock in common), so only the chain's own lock orders them.
      const writes = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 ? keyAdmin : operator).call('POST', `/tenants/${tenant.tenantId}/persons`, {
            displayName: `Concurrent ${i}`,
            username: `c${i}-${Date.now().toString(36)}`,
            password: 'long enough password',
          }),
        ),
      );
      expect(writes.map((w) => w.status)).toEqual(Array(12).fill(201));
      expect(await entryCount()).toBe(before + 12);
      expect(await verify()).toEqual({ ok: true, entries: before + 12 });
    });

    it('shows an edited row, then a removed one, at the first broken link', async () => {
      const [victim, next] = await knex('admin_audit').orderBy('id').offset(3).limit(2).select('*');
      await knex('admin_audit').where({ id: victim.id }).update({ target_id: 'someone-else' });
      expect(await verify()).toMatchObject({ ok: false, brokenAt: String(victim.id) });
      await knex('admin_audit').where({ id: victim.id }).delete();
      expect(await verify()).toMatchObject({ ok: false, brokenAt: String(next.id) });
      await knex('admin_audit').insert(victim); // put back exactly as it was: the chain holds again
      expect(await verify()).toMatchObject({ ok: true });
    });
  });

  describe('a change that cannot be recorded', () => {
    it('is not made either: the database failing the entry answers 503 and the client keeps its status', async () => {
      const before = await knex('clients').where({ id: tenant.clientId }).first('status');
      await knex.raw('alter table admin_audit rename to admin_audit_away');
      try {
        const res = await keyAdmin.checked('updateClient', 'PATCH', `/clients/${tenant.clientId}`, {
          status: before.status === 'active' ? 'disabled' : 'active',
        });
        expect({ status: res.status, error: res.body.error }).toEqual({
          status: 503,
          error: 'authorization_unavailable',
        });
      } finally {
        await knex.raw('alter table admin_audit_away rename to admin_audit');
      }
      expect(await knex('clients').where({ id: tenant.clientId }).first('status')).toEqual(before);
    });
  });

  describe('the command line and the console', () => {
    it('reads a tenant trail with `audit --tenant` and its filters', async () => {
      const out: string[] = [];
      const env = { ADMIN_URL: `${system.pdpUrl}/admin/v1`, ADMIN_TOKEN: system.adminToken };
      const code = await adminCli(
        ['audit', '--tenant', tenant.tenantId, '--action', 'client.disable', '--since', '2000-01-01T00:00:00Z'],
        env,
        { out: (t) => out.push(t), err: () => {} },
      );
      expect(code).toBe(0);
      expect(JSON.parse(out.join('\n')).items.map((e: Entry) => e.action)).toEqual(['client.disable']);
    });

    it('records a console change with its key and shows it on the Audit page with the same filters', async () => {
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        const consoleUrl = `${system.pdpUrl}/admin/console`;
        await page.goto(`${consoleUrl}/sign-in`);
        await page.getByLabel('Admin key or operator token').fill(secrets[0]!);
        await Promise.all([
          page.waitForNavigation(),
          page.getByRole('button', { name: 'Sign in', exact: true }).click(),
        ]);
        await page.goto(`${consoleUrl}/tenants/${tenant.tenantId}/service-accounts`);
        const before = await entryCount();
        await Promise.all([
          page.waitForNavigation(),
          page
            .getByRole('button', { name: /^Advance epoch/ })
            .first()
            .click(),
        ]);
        expect(await entryCount()).toBe(before); // the console asks first; nothing is changed or recorded yet
        await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Confirm' }).click()]);
        expect(await entryCount()).toBe(before + 1);
        expect(await newest()).toMatchObject({
          action: 'account.epoch_advance',
          actor: { kind: 'tenant_admin_key', keyId },
        });
        await page.getByRole('link', { name: 'Audit', exact: true }).click();
        // The action is chosen from the actions that exist; each entry is a sentence with its code in small type.
        await page.getByLabel('Action').selectOption('account.epoch_advance');
        await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Filter' }).click()]);
        const actions = await page.locator('tbody th small').allTextContents();
        expect(actions.length).toBeGreaterThan(0);
        expect(new Set(actions)).toEqual(new Set(['account.epoch_advance']));
        expect(await page.getByRole('rowheader').first().textContent()).toMatch(/^Advanced the epoch of /);
      } finally {
        await browser.close();
      }
    });

    it('counts committed changes by action (admin_changes_total)', async () => {
      const values = (await system.telemetry.registry.getSingleMetric('admin_changes_total')!.get()).values;
      expect(values.find((v) => v.labels.action === 'client.disable')?.value).toBeGreaterThanOrEqual(1);
    });
  });

  describe('the reads made for one answer', () => {
    it('run one after another inside an audited change, whose transaction is one connection, and together outside one', async () => {
      const order: string[] = [];
      const read = (name: string) => async () => {
        order.push(`start ${name}`);
        await scopedKnex(knex).raw('select pg_sleep(0.02)');
        order.push(`end ${name}`);
        return name;
      };
      const app = express();
      app.use(auditedChanges(knex, createLogger('audit-test', 'silent'), () => ({ kind: 'operator' })));
      app.all('/reads', async (_req, res) => {
        order.length = 0;
        const results = await reads(read('a'), read('b'));
        // A refusal: the change rolls back and needs no entry.
        res.status(409).json({ results, order: [...order] });
      });
      const server = app.listen(0, '127.0.0.1');
      await new Promise((ok) => server.once('listening', ok));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/reads`;
      try {
        const inChange = await (await fetch(url, { method: 'POST' })).json();
        expect(inChange).toEqual({ results: ['a', 'b'], order: ['start a', 'end a', 'start b', 'end b'] });
        const outside = await (await fetch(url)).json();
        // Together: both start before either ends; which of two concurrent queries ends first is the server's.
        expect(outside.results).toEqual(['a', 'b']);
        expect(outside.order.slice(0, 2)).toEqual(['start a', 'start b']);
        expect([...outside.order.slice(2)].sort()).toEqual(['end a', 'end b']);
      } finally {
        await new Promise((ok) => server.close(ok));
      }
    });
  });
});
