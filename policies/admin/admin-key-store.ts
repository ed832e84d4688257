// Tenant admin keys: `<keyId>.<secret>`. The id part finds the one row to check, so verification costs one digest
// whatever the number of keys; only the digest of the whole key is stored, and the key is shown once.
import type { Knex } from 'knex';
import { isId, newId } from '../../common/ids.js';
import { digestSecret, isScryptHash, randomSecret, verifySecret } from '../../common/secrets.js';

export interface IssuedAdminKey {
  keyId: string;
  key: string;
}

/** `label`: the admin's words for the key, shown wherever the key is named (migration 017). */
export async function issueTenantAdminKey(knex: Knex, tenantId: string, label?: string): Promise<IssuedAdminKey> {
  const keyId = newId('key');
  const key = `${keyId}.${randomSecret()}`;
  await knex('tenant_admin_keys').insert({
    id: keyId,
    tenant_id: tenantId,
    key_hash: digestSecret(key),
    label: label ?? null,
  });
  return { keyId, key };
}

/**
 * The tenant a presented key manages, or undefined for anything that is not a live key. A key stored with scrypt
 * before issue 32 is re-stored as its digest on its first right use (only if the row still holds that hash).
 */
export async function verifyTenantAdminKey(knex: Knex, presented: string): Promise<string | undefined> {
  const keyId = presented.split('.', 1)[0];
  if (!isId('key', keyId)) return undefined;
  const row = await knex('tenant_admin_keys').where('id', keyId).first('tenant_id', 'key_hash');
  if (!row || !(await verifySecret(presented, row.key_hash))) return undefined;
  if (isScryptHash(row.key_hash))
    await knex('tenant_admin_keys')
      .where({ id: keyId, key_hash: row.key_hash })
      .update({ key_hash: digestSecret(presented) });
  return row.tenant_id as string;
}

/** Deletes the key (revocation is immediate: the next request with it is 401); false when it is not this tenant's. */
export async function revokeTenantAdminKey(knex: Knex, tenantId: string, keyId: string): Promise<boolean> {
  if (!isId('key', keyId)) return false;
  return (await knex('tenant_admin_keys').where({ id: keyId, tenant_id: tenantId }).delete()) > 0;
}

/** Whether the key `keyId` still exists for `tenantId` (a console session ends when its key is revoked). */
export async function tenantAdminKeyLive(knex: Knex, tenantId: string, keyId: string): Promise<boolean> {
  return (
    isId('key', keyId) && Boolean(await knex('tenant_admin_keys').where({ id: keyId, tenant_id: tenantId }).first('id'))
  );
}
