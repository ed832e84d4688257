// A small admin API client for tests: the same calls a tenant admin or operator makes.
import type { System } from '../../infra/system.js';
import { appRedirectUri } from './app-callback.js';
import { assertResponseMatches } from './openapi.js';

export interface AdminResponse<T = Record<string, any>> {
  status: number;
  headers: Headers;
  body: T;
}

export function adminClient(system: Pick<System, 'pdpUrl' | 'adminToken'>, token = system.adminToken) {
  async function call<T = Record<string, any>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<AdminResponse<T>> {
    const res = await fetch(`${system.pdpUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    // An NDJSON stream (an export) stays text: each line is checked on its own (x-line-schema).
    const ndjson = /ndjson/.test(res.headers.get('content-type') ?? '');
    return { status: res.status, headers: res.headers, body: !text ? undefined : ndjson ? text : JSON.parse(text) };
  }
  async function ok<T = Record<string, any>>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await call<T>(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
  /** `call`, with the answer held to admin-api.yaml for `operationId`. */
  async function checked<T = Record<string, any>>(
    operationId: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<AdminResponse<T>> {
    const res = await call<T>(method, path, body);
    assertResponseMatches('admin', operationId, { status: res.status, headers: res.headers, body: res.body ?? '' });
    return res;
  }
  return { call, ok, checked };
}
export type AdminClient = ReturnType<typeof adminClient>;

export interface TenantSetup {
  tenantId: string;
  clientId: string;
  clientSecret?: string;
  personId: string;
  accountId: string;
  username: string;
  password: string;
  redirectUri: string;
  tenantName: string;
  clientName: string;
}

let counter = 0;

/** Another person of `tenantId` (with a login account and the tenant's relationship); returns the person id. */
export async function createPerson(admin: AdminClient, tenantId: string): Promise<string> {
  const n = `${process.pid}-${++counter}-${Date.now().toString(36)}`;
  return (
    await admin.ok('POST', `/tenants/${tenantId}/persons`, {
      displayName: `Person ${n}`,
      username: `person-${n}`,
      password: 'correct horse battery',
    })
  ).personId as string;
}

/** A tenant with one person, one third-party client and a grant of `capabilities` to it. */
export async function setupTenant(
  admin: AdminClient,
  opts: { plan?: 'L1' | 'L2'; capabilities?: readonly string[]; type?: 'public' | 'confidential' } = {},
): Promise<TenantSetup> {
  const n = `${process.pid}-${++counter}-${Date.now().toString(36)}`;
  const redirectUri = appRedirectUri();
  const tenant = await admin.ok('POST', '/tenants', {
    label: `t${n}`,
    displayName: `Tenant ${n}`,
    plan: opts.plan ?? 'L2',
  });
  const password = 'correct horse battery';
  const person = await admin.ok('POST', `/tenants/${tenant.tenantId}/persons`, {
    displayName: `Person ${n}`,
    username: `user-${n}`,
    password,
  });
  const client = await admin.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
    slug: 'app',
    name: `App ${n}`,
    kind: 'third_party',
    type: opts.type ?? 'public',
    redirectUris: [redirectUri],
  });
  await admin.ok('PUT', `/tenants/${tenant.tenantId}/grants/${client.clientId}`, {
    capabilities: opts.capabilities ?? ['svc.profile.self.read', 'svc.tenant.info.read'],
  });
  return {
    tenantId: tenant.tenantId,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    personId: person.personId,
    accountId: person.accountId,
    username: `user-${n}`,
    password,
    redirectUri,
    tenantName: `Tenant ${n}`,
    clientName: `App ${n}`,
  };
}

export interface MachineClientSetup extends TenantSetup {
  clientSecret: string;
  serviceAccountId: string;
}

/**
 * A tenant with a confidential client granted `grant`, and its service account holding `capabilities` (held to
 * admin-api.yaml).
 */
export async function setupMachineClient(
  admin: AdminClient,
  opts: { grant: readonly string[]; capabilities?: readonly string[]; plan?: 'L1' | 'L2' },
): Promise<MachineClientSetup> {
  const tenant = await setupTenant(admin, { type: 'confidential', plan: opts.plan, capabilities: opts.grant });
  const res = await admin.checked('createServiceAccount', 'POST', `/tenants/${tenant.tenantId}/service-accounts`, {
    clientId: tenant.clientId,
    name: 'nightly sync',
    capabilities: opts.capabilities ?? opts.grant,
  });
  if (res.status !== 201) throw new Error(`service account: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...tenant, clientSecret: tenant.clientSecret!, serviceAccountId: res.body.accountId };
}
