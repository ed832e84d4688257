// Tenant admin keys: created and revoked by the operator only (policies/admin/authority.ts).
import type { Router } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { issueTenantAdminKey, revokeTenantAdminKey } from './admin-key-store.js';
import { REDACTED, recordChange } from './audit.js';
import { adminRoutes, idPages, reply, parseForTenant, type Page } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';

const keyPages = idPages('key');
const KeyQuery = keyPages.query({});
/** The body of POST .../admin-keys, optional: a label the admin knows the key by. */
const CreateKey = z.strictObject({ label: z.string().trim().min(1).max(100).optional() });

export interface AdminKeyView {
  keyId: string;
  tenantId: string;
  /** Present when the key was given one. */
  label?: string;
  createdAt: string;
}

/** A page of the tenant's live admin keys in creation order: ids and dates only, never a key or its hash. */
export async function adminKeyPage(knex: Knex, tenantId: string, query: unknown): Promise<Page<AdminKeyView>> {
  const parsed = await parseForTenant(knex, tenantId, KeyQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, cursor } = parsed.value;
  const rows: { id: string; tenant_id: string; label: string | null; created_at: Date }[] = await knex(
    'tenant_admin_keys',
  )
    .where({ tenant_id: tenantId })
    .modify((q) => void (cursor && q.where('id', '>', cursor)))
    .orderBy('id')
    .limit(limit + 1)
    .select('id', 'tenant_id', 'label', 'created_at');
  const { items, nextCursor } = keyPages.page(rows, limit, (k) => k.id);
  return done({
    items: items.map((k) => ({
      keyId: k.id,
      tenantId: k.tenant_id,
      ...(k.label !== null && { label: k.label }),
      createdAt: new Date(k.created_at).toISOString(),
    })),
    nextCursor,
  });
}

/**
 * A new admin key for the tenant (operator only): `{keyId, key, label?}`, the key shown once and stored only as a hash.
 * The body is optional; its label is also recorded in the audit entry, which outlives the key's row (revoked keys'
 * rows are deleted), so the audit page names the key by it even after revocation.
 */
export async function createAdminKey(
  knex: Knex,
  tenantId: string,
  body: unknown = {},
): Promise<Outcome<{ keyId: string; key: string; label?: string }>> {
  const parsed = await parseForTenant(knex, tenantId, CreateKey, body ?? {});
  if (!parsed.ok) return parsed;
  const { label } = parsed.value;
  const issued = await issueTenantAdminKey(knex, tenantId, label);
  await recordChange({
    action: 'admin_key.create',
    target: { type: 'admin_key', id: issued.keyId },
    tenantId,
    changes: { key: { from: null, to: REDACTED }, ...(label !== undefined && { label: { from: null, to: label } }) },
  });
  return done({ ...issued, ...(label !== undefined && { label }) });
}

/** The labels of `keyIds` of the tenant, from their `admin_key.create` entries (revoked keys' too); one indexed read. */
export async function adminKeyLabels(
  knex: Knex,
  tenantId: string,
  keyIds: Iterable<string>,
): Promise<Map<string, string>> {
  const wanted = [...new Set(keyIds)];
  const labels = new Map<string, string>();
  if (wanted.length === 0) return labels;
  const rows: { target_id: string; changes: { label?: { to?: unknown } } | null }[] = await knex('admin_audit')
    .where({ tenant_id: tenantId, target_type: 'admin_key', action: 'admin_key.create' })
    .whereIn('target_id', wanted)
    .select('target_id', 'changes');
  for (const r of rows) if (typeof r.changes?.label?.to === 'string') labels.set(r.target_id, r.changes.label.to);
  return labels;
}

/** The label of the tenant's live key `keyId`, or undefined (none given, or no such key). */
export async function liveKeyLabel(knex: Knex, tenantId: string, keyId: string): Promise<string | undefined> {
  const row = await knex('tenant_admin_keys').where({ id: keyId, tenant_id: tenantId }).first('label');
  return row?.label ?? undefined;
}

/** How the console names a key: its label with the id after, or the id alone. */
export const keyWords = (keyId: string, label: string | undefined) => (label ? `${label} (${keyId})` : keyId);

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
  const r = adminRoutes();
  r.get('/tenants/:tenantId/admin-keys', async (req, res) =>
    reply(res, await adminKeyPage(knex, req.params.tenantId, req.query)),
  );
  r.post('/tenants/:tenantId/admin-keys', async (req, res) =>
    reply(res, await createAdminKey(knex, req.params.tenantId, req.body), 201),
  );
  r.delete('/tenants/:tenantId/admin-keys/:keyId', async (req, res) =>
    reply(res, await revokeAdminKey(knex, req.params.tenantId, req.params.keyId), 204),
  );
  return r;
}
