// Tenant admin keys: created and revoked by the operator only (policies/admin/authority.ts).
import { Router } from 'express';
import type { Knex } from 'knex';
import { issueTenantAdminKey, revokeTenantAdminKey } from './admin-key-store.js';
import { REDACTED, recordChange } from './audit.js';
import { idPages, reply, tenantExists, parseForTenant, type Page } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';

const keyPages = idPages('key');
const KeyQuery = keyPages.query({});

export interface AdminKeyView {
  keyId: string;
  tenantId: string;
  createdAt: string;
}

/** A page of the tenant's live admin keys in creation order: ids and dates only, never a key or its hash. */
export async function adminKeyPage(knex: Knex, tenantId: string, query: unknown): Promise<Page<AdminKeyView>> {
  const parsed = await parseForTenant(knex, tenantId, KeyQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, cursor } = parsed.value;
  const rows: { id: string; tenant_id: string; created_at: Date }[] = await knex('tenant_admin_keys')
    .where({ tenant_id: tenantId })
    .modify((q) => void (cursor && q.where('id', '>', cursor)))
    .orderBy('id')
    .limit(limit + 1)
    .select('id', 'tenant_id', 'created_at');
  const { items, nextCursor } = keyPages.page(rows, limit, (k) => k.id);
  return done({
    items: items.map((k) => ({ keyId: k.id, tenantId: k.tenant_id, createdAt: new Date(k.created_at).toISOString() })),
    nextCursor,
  });
}

/** A new admin key for the tenant (operator only): `{keyId, key}`, the key shown once and stored only as a hash. */
export async function createAdminKey(knex: Knex, tenantId: string): Promise<Outcome<{ keyId: string; key: string }>> {
  if (!(await tenantExists(knex, tenantId))) return refused('not_found');
  const issued = await issueTenantAdminKey(knex, tenantId);
  await recordChange({
    action: 'admin_key.create',
    target: { type: 'admin_key', id: issued.keyId },
    tenantId,
    changes: { key: { from: null, to: REDACTED } },
  });
  return done(issued);
}

/** Revokes the tenant's admin key: its API calls and its console sessions end at once. */
export async function revokeAdminKey(knex: Knex, tenantId: string, keyId: string): Promise<Outcome<void>> {
  if (!(await revokeTenantAdminKey(knex, tenantId, keyId))) return refused('not_found');
  await recordChange({
    action: 'admin_key.revoke',
    target: { type: 'admin_key', id: keyId },
    tenantId,
    changes: { key: { from: REDACTED, to: null } },
  });
  return done(undefined);
}

export function adminKeysRouter(knex: Knex): Router {
  const r = Router();
  r.get('/tenants/:tenantId/admin-keys', async (req, res) =>
    reply(res, await adminKeyPage(knex, req.params.tenantId, req.query)),
  );
  r.post('/tenants/:tenantId/admin-keys', async (req, res) =>
    reply(res, await createAdminKey(knex, req.params.tenantId), 201),
  );
  r.delete('/tenants/:tenantId/admin-keys/:keyId', async (req, res) =>
    reply(res, await revokeAdminKey(knex, req.params.tenantId, req.params.keyId), 204),
  );
  return r;
}
