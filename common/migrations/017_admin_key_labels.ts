// An admin key's label (issue 51 point 4): given when the key is made, shown on the key list, the revoke question and
// as "By" on the console's audit page. The key row goes when the key is revoked, so the label is also recorded in the
// key's `admin_key.create` audit entry; the audit page finds those entries by target, which this index serves.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenant_admin_keys', (t) => t.text('label'));
  await knex.schema.alterTable('admin_audit', (t) => t.index(['tenant_id', 'target_type', 'target_id']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('admin_audit', (t) => t.dropIndex(['tenant_id', 'target_type', 'target_id']));
  await knex.schema.alterTable('tenant_admin_keys', (t) => t.dropColumn('label'));
}
