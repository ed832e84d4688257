// Tenant admin keys: a key manages its own tenant only (persons, clients, grants, service accounts, extensions) and
// never another tenant, a plan, a status, admin keys or the capability catalogue. The matrix below calls every admin
// operation in admin-api.yaml with a key, on its own tenant and on another one; every answer is held to the document.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { System } from '../../infra/system.js';
import { verifySecret } from '../../common/secrets.js';
import { operationsOf } from '../support/openapi.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { registerExtension } from '../support/extensions.js';

describe('tenant-admin-keys', () => {
  let system: System;
  let operator: AdminClient;
  type RichTenant = TenantSetup & {
    serviceAccountId: string;
    extensionId: string;
    confidentialClientId: string;
    spareClientId: string;
  };
  let own: RichTenant;
  let other: RichTenant;
  let key: string;
  let keyId: string;
  let keyAdmin: AdminClient;

  /**
   * A tenant with a person, a public and a confidential client, a service account, a registered extension, and a spare
   * client for the matrix to delete.
   */
  async function richTenant(): Promise<RichTenant> {
    const tenant = await setupTenant(operator);
    const confidential = await operator.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
      slug: 'sync',
      name: 'Sync',
      kind: 'third_party',
      type: 'confidential',
      redirectUris: ['https://sync.example/cb'],
    });
    const sa = await operator.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
      clientId: confidential.clientId,
      name: 'sync',
      capabilities: [],
    });
    const extensionId = await registerExtension(operator, tenant.clientId);
    const spare = await operator.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
      slug: 'spare',
      name: 'Spare',
      kind: 'third_party',
      type: 'public',
      redirectUris: ['https://spare.example/cb'],
    });
    return {
      ...tenant,
      spareClientId: spare.clientId as string,
      serviceAccountId: sa.accountId as string,
      extensionId,
      confidentialClientId: confidential.clientId as string,
    };
  }

  beforeAll(async () => {
    system = await startTestSystem();
    operator = adminClient(system);
    [own, other] = [await richTenant(), await richTenant()];
    const created = await operator.checked('createTenantAdminKey', 'POST', `/tenants/${own.tenantId}/admin-keys`);
    expect(created.status).toBe(201);
    ({ key, keyId } = created.body as { key: string; keyId: string });
    keyAdmin = adminClient(system, key);
  });
  afterAll(async () => {
    await system?.close();
  });

  type T = typeof own;
  interface Case {
    operationId: string;
    method: string;
    path: (t: T) => string;
    body?: (t: T) => unknown;
  }

  /** One call per admin operation, aimed at tenant `t`'s objects. */
  const CASES: Case[] = [
    {
      operationId: 'createTenant',
      method: 'POST',
      path: () => '/tenants',
      body: () => ({ label: `k${Date.now().toString(36)}`, displayName: 'X', plan: 'L1' }),
    },
    { operationId: 'listTenants', method: 'GET', path: () => '/tenants' },
    { operationId: 'listPersons', method: 'GET', path: (t) => `/tenants/${t.tenantId}/persons` },
    { operationId: 'listClients', method: 'GET', path: (t) => `/tenants/${t.tenantId}/clients` },
    { operationId: 'getTenant', method: 'GET', path: (t) => `/tenants/${t.tenantId}` },
    { operationId: 'getClient', method: 'GET', path: (t) => `/clients/${t.clientId}` },
    { operationId: 'getAccount', method: 'GET', path: (t) => `/accounts/${t.serviceAccountId}` },
    { operationId: 'listExtensions', method: 'GET', path: (t) => `/tenants/${t.tenantId}/extensions` },
    { operationId: 'getExtension', method: 'GET', path: (t) => `/extensions/${t.extensionId}` },
    // The catalogue belongs to no tenant: every admin caller reads it (and only the operator changes it).
    { operationId: 'listCapabilities', method: 'GET', path: () => '/capabilities' },
    { operationId: 'listServiceAccounts', method: 'GET', path: (t) => `/tenants/${t.tenantId}/service-accounts` },
    { operationId: 'listTenantAdminKeys', method: 'GET', path: (t) => `/tenants/${t.tenantId}/admin-keys` },
    {
      operationId: 'updateTenant',
      method: 'PATCH',
      path: (t) => `/tenants/${t.tenantId}`,
      body: () => ({ displayName: 'Renamed' }),
    },
    { operationId: 'createTenantAdminKey', method: 'POST', path: (t) => `/tenants/${t.tenantId}/admin-keys` },
    {
      operationId: 'revokeTenantAdminKey',
      method: 'DELETE',
      path: (t) => `/tenants/${t.tenantId}/admin-keys/key_00000000000000000000000000`,
    },
    {
      operationId: 'createPerson',
      method: 'POST',
      path: (t) => `/tenants/${t.tenantId}/persons`,
      body: () => ({
        displayName: 'P',
        username: `p-${Math.random().toString(36).slice(2)}`,
        password: 'long enough password',
      }),
    },
    {
      operationId: 'endPersonRelationship',
      method: 'DELETE',
      path: (t) => `/tenants/${t.tenantId}/persons/psn_00000000000000000000000000`,
    },
    {
      operationId: 'createClient',
      method: 'POST',
      path: (t) => `/tenants/${t.tenantId}/clients`,
      body: () => ({
        slug: `c${Math.random().toString(36).slice(2, 8)}`,
        name: 'C',
        kind: 'third_party',
        type: 'public',
        redirectUris: ['https://c.example/cb'],
      }),
    },
    {
      operationId: 'updateClient',
      method: 'PATCH',
      path: (t) => `/clients/${t.clientId}`,
      body: () => ({ status: 'active' }),
    },
    { operationId: 'deleteClient', method: 'DELETE', path: (t) => `/clients/${t.spareClientId}` },
    { operationId: 'createClientSecret', method: 'POST', path: (t) => `/clients/${t.clientId}/secrets` },
    {
      operationId: 'promoteClientSecret',
      method: 'POST',
      path: (t) => `/clients/${t.confidentialClientId}/secrets/promote`,
    },
    {
      operationId: 'putGrant',
      method: 'PUT',
      path: (t) => `/tenants/${t.tenantId}/grants/${t.clientId}`,
      body: () => ({ capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'] }),
    },
    { operationId: 'getGrant', method: 'GET', path: (t) => `/tenants/${t.tenantId}/grants/${t.clientId}` },
    {
      operationId: 'deleteGrant',
      method: 'DELETE',
      path: (t) => `/tenants/${t.tenantId}/grants/${t.confidentialClientId}`,
    },
    {
      operationId: 'createServiceAccount',
      method: 'POST',
      path: (t) => `/tenants/${t.tenantId}/service-accounts`,
      body: (t) => ({ clientId: t.clientId, name: 'S', capabilities: [] }),
    },
    {
      operationId: 'updateAccount',
      method: 'PATCH',
      path: (t) => `/accounts/${t.serviceAccountId}`,
      body: () => ({ status: 'active' }),
    },
    { operationId: 'advanceAccountEpoch', method: 'POST', path: (t) => `/accounts/${t.serviceAccountId}/epoch` },
    { operationId: 'revokeAccountSessions', method: 'POST', path: (t) => `/accounts/${t.accountId}/sessions/revoke` },
    {
      operationId: 'createExtension',
      method: 'POST',
      path: (t) => `/clients/${t.clientId}/extensions`,
      body: () => ({ name: 'notes', schemas: { '1': { type: 'object' } } }),
    },
    {
      operationId: 'putExtensionSchema',
      method: 'PUT',
      path: (t) => `/extensions/${t.extensionId}/schemas/1`,
      body: () => ({ type: 'object' }),
    },
    {
      operationId: 'updateCapability',
      method: 'PATCH',
      path: () => '/capabilities/svc.person.read',
      body: () => ({ enabled: true }),
    },
    { operationId: 'listDecisions', method: 'GET', path: (t) => `/tenants/${t.tenantId}/decisions?limit=5` },
    { operationId: 'getUsage', method: 'GET', path: (t) => `/tenants/${t.tenantId}/usage` },
    { operationId: 'exportRecords', method: 'GET', path: (t) => `/tenants/${t.tenantId}/export` },
    { operationId: 'exportTenant', method: 'GET', path: (t) => `/tenants/${t.tenantId}/export/tenant` },
    { operationId: 'listTenantAudit', method: 'GET', path: (t) => `/tenants/${t.tenantId}/audit` },
    { operationId: 'listAudit', method: 'GET', path: () => '/audit' },
    { operationId: 'verifyAudit', method: 'GET', path: () => '/audit/verify' },
    { operationId: 'verifyTenantAudit', method: 'GET', path: (t) => `/tenants/${t.tenantId}/audit/verify` },
  ];
  /** Operations a tenant admin key may never perform, even on its own tenant. */
  const OPERATOR_ONLY = new Set([
    'createTenant',
    'listTenants',
    'createTenantAdminKey',
    'listTenantAdminKeys',
    'revokeTenantAdminKey',
    'updateCapability',
    'listAudit',
    'verifyAudit',
  ]);

  const call = (admin: AdminClient, c: Case, t: T) => admin.checked(c.operationId, c.method, c.path(t), c.body?.(t));

  describe('tenant admin key matrix', () => {
    it('covers every admin operation in admin-api.yaml', () => {
      expect(CASES.map((c) => c.operationId).sort()).toEqual(
        operationsOf('admin')
          .map((o) => o.operationId)
          .sort(),
      );
    });

    /** Operations on no tenant's object, which a tenant key may perform whatever its tenant. */
    const TENANT_FREE = new Set(['listCapabilities']);
    it.each(CASES.filter((c) => !TENANT_FREE.has(c.operationId)).map((c) => [c.operationId, c] as const))(
      '%s on another tenant: 403 forbidden',
      async (_id, c) => {
        const res = await call(keyAdmin, c, other);
        expect({ status: res.status, error: res.body?.error }).toEqual({ status: 403, error: 'forbidden' });
      },
    );

    it.each(CASES.filter((c) => OPERATOR_ONLY.has(c.operationId)).map((c) => [c.operationId, c] as const))(
      '%s on its own tenant: 403 forbidden (operator only)',
      async (_id, c) => {
        const res = await call(keyAdmin, c, own);
        expect({ status: res.status, error: res.body?.error }).toEqual({ status: 403, error: 'forbidden' });
      },
    );

    it('reaches no operator-only operation on its own tenant by a fixed word of its path in capitals (403 or 404)', async () => {
      // Each fixed word of the path (ids hold '_' or digits) in capitals in turn, e.g. /tenants/{own}/ADMIN-KEYS: the
      // router must match the path as the authority table read it.
      const spellings = (path: string) =>
        [...path.matchAll(/(?<=\/)[a-z-]+(?=\/|$)/g)].map(
          ({ index, 0: word }) => path.slice(0, index) + word.toUpperCase() + path.slice(index + word.length),
        );
      const keysBefore = await system.db.knex('tenant_admin_keys').where({ tenant_id: own.tenantId }).count({ n: '*' });
      for (const c of CASES.filter((c) => OPERATOR_ONLY.has(c.operationId)))
        for (const path of spellings(c.path(own))) {
          const res = await keyAdmin.call(c.method, path, c.body?.(own));
          expect({ path, status: res.status, error: res.body?.error }).toEqual({
            path,
            status: res.status === 403 ? 403 : 404,
            error: res.status === 403 ? 'forbidden' : 'not_found',
          });
        }
      expect(await system.db.knex('tenant_admin_keys').where({ tenant_id: own.tenantId }).count({ n: '*' })).toEqual(
        keysBefore,
      );
    });

    it.each(CASES.filter((c) => !OPERATOR_ONLY.has(c.operationId)).map((c) => [c.operationId, c] as const))(
      '%s on its own tenant: allowed by authority (neither 401 nor 403, and no 5xx)',
      async (_id, c) => {
        const res = await call(keyAdmin, c, own);
        expect([401, 403]).not.toContain(res.status);
        expect(res.status).toBeLessThan(500);
      },
    );

    it('may rename its tenant but never change its plan or status', async () => {
      expect(
        (await keyAdmin.checked('updateTenant', 'PATCH', `/tenants/${own.tenantId}`, { displayName: 'Own' })).status,
      ).toBe(200);
      for (const body of [{ plan: 'L1' }, { status: 'suspended' }, { displayName: 'X', plan: 'L2' }]) {
        const res = await keyAdmin.checked('updateTenant', 'PATCH', `/tenants/${own.tenantId}`, body);
        expect({ status: res.status, error: res.body.error }).toEqual({ status: 403, error: 'forbidden' });
      }
      const tenant = await system.db.knex('tenants').where({ id: own.tenantId }).first();
      expect({ plan: tenant.plan, status: tenant.status }).toEqual({ plan: 'L2', status: 'active' });
    });

    it("sets its own rate limits only within its plan's ceiling; the operator is not held to it", async () => {
      const limits = (tenant: number, account: number, durationS = 60) => ({
        tenant: { points: tenant, durationS },
        account: { points: account, durationS },
      });
      const within = limits(30_000, 6000); // L2's ceiling, exactly
      expect(
        (await keyAdmin.checked('updateTenant', 'PATCH', `/tenants/${own.tenantId}`, { rateLimit: within })).status,
      ).toBe(200);
      const beyond: [string, unknown][] = [
        ['a million a second', limits(1_000_000, 1_000_000, 1)],
        ['a larger burst at a lower average rate', limits(40_000, 6000, 3600)],
        ['a faster average rate in a smaller burst', limits(1000, 6000, 1)],
        ['the account layer alone', limits(30_000, 6001)],
      ];
      for (const [name, rateLimit] of beyond) {
        const res = await keyAdmin.checked('updateTenant', 'PATCH', `/tenants/${own.tenantId}`, { rateLimit });
        expect({ name, status: res.status, error: res.body.error }).toEqual({ name, status: 403, error: 'forbidden' });
        expect(res.body.message).toMatch(/ceiling/);
      }
      expect((await system.db.knex('tenants').where({ id: own.tenantId }).first('rate_limit')).rate_limit).toEqual(
        within,
      );
      const lifted = await operator.checked('updateTenant', 'PATCH', `/tenants/${own.tenantId}`, {
        rateLimit: limits(1_000_000, 1_000_000, 1),
      });
      expect(lifted.status).toBe(200);
    });

    it("cannot use another tenant's client in its own tenant's grant or service account (404)", async () => {
      expect(
        (
          await keyAdmin.checked('putGrant', 'PUT', `/tenants/${own.tenantId}/grants/${other.clientId}`, {
            capabilities: [],
          })
        ).status,
      ).toBe(404);
      const sa = await keyAdmin.checked('createServiceAccount', 'POST', `/tenants/${own.tenantId}/service-accounts`, {
        clientId: other.confidentialClientId,
        name: 'x',
        capabilities: [],
      });
      expect(sa.status).toBe(404);
    });
  });

  describe('tenant admin key storage and revocation', () => {
    it('is stored only as a hash of the whole key', async () => {
      const row = await system.db.knex('tenant_admin_keys').where({ id: keyId }).first();
      expect(row.tenant_id).toBe(own.tenantId);
      expect(row.key_hash).not.toContain(key.split('.')[1]);
      expect(await verifySecret(key, row.key_hash)).toBe(true);
    });

    it('keeps an optional label (trimmed, 1 to 100 characters): listed, and recorded in the create entry', async () => {
      const path = `/tenants/${own.tenantId}/admin-keys`;
      const { status, body } = await operator.checked('createTenantAdminKey', 'POST', path, {
        label: '  Site office  ',
      });
      expect(status).toBe(201);
      expect(body.label).toBe('Site office');
      expect((await system.db.knex('tenant_admin_keys').where({ id: body.keyId }).first('label')).label).toBe(
        'Site office',
      );
      const listed = await operator.checked('listTenantAdminKeys', 'GET', `${path}?limit=100`);
      const entry = listed.body.items.find((k: { keyId: string }) => k.keyId === body.keyId);
      expect(entry).toMatchObject({ keyId: body.keyId, label: 'Site office' });
      expect(listed.body.items.find((k: { keyId: string }) => k.keyId === keyId)).not.toHaveProperty('label');
      const audit = await operator.ok('GET', `/tenants/${own.tenantId}/audit?action=admin_key.create&limit=100`);
      const created = audit.items.find((e: { target: { id: string } }) => e.target.id === body.keyId);
      expect(created.changes).toEqual({
        key: { from: null, to: '[redacted]' },
        label: { from: null, to: 'Site office' },
      });
      for (const label of ['   ', 'x'.repeat(101), 7]) {
        const refused = await operator.checked('createTenantAdminKey', 'POST', path, { label });
        expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 422, error: 'schema_invalid' });
      }
      const unlisted = await operator.checked('createTenantAdminKey', 'POST', path, { name: 'x' });
      expect(unlisted.status).toBe(422);
      await operator.ok('DELETE', `${path}/${body.keyId}`);
    });

    it('refuses a wrong secret under a real key id with 401 invalid_token', async () => {
      const forged = adminClient(system, `${keyId}.not-the-secret`);
      const res = await forged.checked('getGrant', 'GET', `/tenants/${own.tenantId}/grants/${own.clientId}`);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 401, error: 'invalid_token' });
    });

    it('is refused with 401 invalid_token from the request after its revocation; only the operator revokes', async () => {
      const { body } = await operator.checked('createTenantAdminKey', 'POST', `/tenants/${own.tenantId}/admin-keys`);
      const doomed = adminClient(system, body.key);
      const path = `/tenants/${own.tenantId}/grants/${own.clientId}`;
      expect((await doomed.checked('getGrant', 'GET', path)).status).toBe(200);
      expect(
        (
          await operator.checked(
            'revokeTenantAdminKey',
            'DELETE',
            `/tenants/${other.tenantId}/admin-keys/${body.keyId}`,
          )
        ).status,
      ).toBe(404);
      expect(
        (await operator.checked('revokeTenantAdminKey', 'DELETE', `/tenants/${own.tenantId}/admin-keys/${body.keyId}`))
          .status,
      ).toBe(204);
      const res = await doomed.checked('getGrant', 'GET', path);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 401, error: 'invalid_token' });
      expect((await keyAdmin.checked('getGrant', 'GET', path)).status).toBe(200);
    });
  });
});
