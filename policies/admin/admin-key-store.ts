// Tenant admin keys: `<keyId>.<secret>`. The id part finds the one row to check, so verification costs one scrypt
// hash whatever the number of keys; only the hash of the whole key is stored, and the key is shown once.
import type { Knex } from 'knex';
import { isId, newId } from '../../common/ids.js';
import { hashSecret, randomSecret, verifySecret } from '../../common/secrets.js';

export interface IssuedAdminKey {
  keyId: string;
  key: string;
}

export async function issueTenantAdminKey(knex: Knex, tenantId: string): Promise<IssuedAdminKey> {
  const keyId = newId('key');
  const key = `${keyId}.${randomSecret()}`;
  await knex('tenant_admin_keys').insert({ id: keyId, tenant_id: tenantId, key_hash: await hashSecret(key) });
  return { keyId, key };
}

/** The tenant a presented key manages, or undefined for anything that is not a live key. */
export async function verifyTenantAdminKey(knex: Knex, presented: string): Promise<string | undefined> {
  const keyId = presented.split('.', 1)[0];
  if (!isId('key', keyId)) return undefined;
  const row = await knex('tenant_admin_keys').where('id', keyId).first('tenant_id', 'key_hash');
  if (!row || !(await verifySecret(presented, row.key_hash))) return undefined;
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
