// Demo data for `npm start`, created through the admin API so it takes the same path as an operator's calls.
import type { Knex } from 'knex';

export const DEMO = {
  tenantLabel: 'demo',
  username: 'alice',
  password: 'alice-demo-password',
  clientSlug: 'sample-app',
  redirectUri: 'http://127.0.0.1:8400/callback',
  capabilities: [
    'svc.profile.self.read',
    'svc.tenant.info.read',
    'svc.person.read',
    'svc.person.metadata.read',
    'svc.person.metadata.write',
  ],
  extensionName: 'Demo notes',
  /** Schema version 1 of the demo extension: a note and a list of tags. */
  extensionSchema: {
    type: 'object',
    properties: {
      note: { type: 'string', maxLength: 1000 },
      tags: { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 20 },
    },
    additionalProperties: false,
  },
};

export interface DemoData {
  tenantId: string;
  clientId: string;
  personId: string;
  extensionId: string;
  created: boolean;
}

async function call(pdpUrl: string, adminToken: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${pdpUrl}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`seed: ${method} ${path} -> ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, string>>;
}

/**
 * Seeds the demo tenant, person, app and grant. Each piece is looked up first and created only when missing, so a
 * later start on the same data changes nothing, and a start that stopped half-way through seeding completes it.
 */
export async function seedDemo(knex: Knex, pdpUrl: string, adminToken: string): Promise<DemoData> {
  let created = false;
  const create = (method: string, path: string, body: unknown) => (
    (created = true),
    call(pdpUrl, adminToken, method, path, body)
  );

  const tenantId =
    ((await knex('tenants').where({ label: DEMO.tenantLabel }).first())?.id as string | undefined) ??
    (await create('POST', '/tenants', { label: DEMO.tenantLabel, displayName: 'Demo Tenant', plan: 'L2' })).tenantId!;
  const personId =
    ((await knex('accounts').where({ tenant_id: tenantId, username: DEMO.username }).first())?.person_id as
      string | undefined) ??
    (
      await create('POST', `/tenants/${tenantId}/persons`, {
        displayName: 'Alice Example',
        username: DEMO.username,
        password: DEMO.password,
      })
    ).personId!;
  const clientId =
    ((await knex('clients').where({ tenant_id: tenantId, slug: DEMO.clientSlug }).first())?.id as string | undefined) ??
    (
      await create('POST', `/tenants/${tenantId}/clients`, {
        slug: DEMO.clientSlug,
        name: 'Sample App',
        kind: 'third_party',
        type: 'public',
        redirectUris: [DEMO.redirectUri],
      })
    ).clientId!;
  if (!(await knex('tenant_grants').where({ tenant_id: tenantId, client_id: clientId }).first()))
    await create('PUT', `/tenants/${tenantId}/grants/${clientId}`, { capabilities: DEMO.capabilities });
  const extensionId =
    ((await knex('extensions').where({ client_id: clientId, name: DEMO.extensionName }).first())?.id as
      string | undefined) ??
    (
      await create('POST', `/clients/${clientId}/extensions`, {
        name: DEMO.extensionName,
        schemas: { 1: DEMO.extensionSchema },
      })
    ).extensionId!;
  return { tenantId, clientId, personId, extensionId, created };
}
