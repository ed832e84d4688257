// Demo data for `npm start`, created through the admin API so it takes the same path as an operator's calls.
import type { Knex } from 'knex';

export const DEMO = {
  tenantLabel: 'demo',
  username: 'alice',
  password: 'alice-demo-password',
  clientSlug: 'sample-app',
  redirectUri: 'http://127.0.0.1:8400/callback',
  capabilities: ['svc.profile.self.read', 'svc.tenant.info.read', 'svc.person.read', 'svc.person.metadata.read', 'svc.person.metadata.write'],
};

export interface DemoData {
  tenantId: string;
  clientId: string;
  personId: string;
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

/** Seeds the demo tenant once; later starts on the same data find it and change nothing. */
export async function seedDemo(knex: Knex, pdpUrl: string, adminToken: string): Promise<DemoData> {
  const existing = await knex('tenants').where({ label: DEMO.tenantLabel }).first();
  if (existing) {
    const client = await knex('clients').where({ tenant_id: existing.id, slug: DEMO.clientSlug }).first();
    const account = await knex('accounts').where({ username: DEMO.username }).first();
    return { tenantId: existing.id, clientId: client.id, personId: account.person_id, created: false };
  }
  const tenant = await call(pdpUrl, adminToken, 'POST', '/tenants', { label: DEMO.tenantLabel, displayName: 'Demo Tenant', plan: 'L2' });
  const person = await call(pdpUrl, adminToken, 'POST', `/tenants/${tenant.tenantId}/persons`, {
    displayName: 'Alice Example', username: DEMO.username, password: DEMO.password,
  });
  const client = await call(pdpUrl, adminToken, 'POST', `/tenants/${tenant.tenantId}/clients`, {
    slug: DEMO.clientSlug, name: 'Sample App', kind: 'third_party', type: 'public', redirectUris: [DEMO.redirectUri],
  });
  await call(pdpUrl, adminToken, 'PUT', `/tenants/${tenant.tenantId}/grants/${client.clientId}`, { capabilities: DEMO.capabilities });
  return { tenantId: tenant.tenantId!, clientId: client.clientId!, personId: person.personId!, created: true };
}
