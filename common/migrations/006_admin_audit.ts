// The audit trail of administrative changes (platform-interfaces.md "Audit trail"): one row per change, appended in
// the change's own transaction; `hash` chains each row to the one before it (SHA-256), so an edited or removed row
// breaks the chain at that point (GET /admin/v1/audit/verify).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('admin_audit', (t) => {
    // Assigned under the append lock, so id order is chain order.
    t.bigIncrements('id').primary();
    t.timestamp('at', { useTz: true }).notNullable();
    /** The tenant the change belongs to; null for changes outside any tenant (the capability catalogue). */
    t.text('tenant_id');
    t.text('actor_kind').notNullable();
    t.text('actor_key_id');
    t.text('action').notNullable();
    t.text('target_type').notNullable();
    t.text('target_id').notNullable();
    t.jsonb('changes');
    t.text('request_id').notNullable();
    t.text('ip').notNullable();
    t.text('hash').notNullable();
    t.index(['tenant_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('admin_audit');
}
