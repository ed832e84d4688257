// A usage row is one metered call, named by its own id, no longer by the caller's request id (issue 20: 50 different
// calls sent with one x-request-id were metered once). Whether a call repeating an id is a retry is decided by the
// gateway's retry rule (gateway/plugins/metering/usage-meter.ts); the call id only keeps a batch written twice from
// counting twice.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_records', (t) => t.text('call_id'));
  await knex('usage_records').update({ call_id: knex.ref('request_id') });
  await knex.schema.alterTable('usage_records', (t) => {
    t.dropPrimary();
    t.dropNullable('call_id');
    t.primary(['tenant_id', 'call_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_records', (t) => {
    t.dropPrimary();
    t.dropColumn('call_id');
  });
  await knex.schema.alterTable('usage_records', (t) => t.primary(['tenant_id', 'request_id']));
}
