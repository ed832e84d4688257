// The console's decisions page shows, beside an allowed decision, the status the API then answered (issue 51: a
// request the backend refused with 428, 422 or 404 is not a success). It finds a page's calls in usage_records by
// request id; since migration 008 keyed the table by call id, nothing indexed the request id.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_records', (t) => t.index(['tenant_id', 'request_id']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('usage_records', (t) => t.dropIndex(['tenant_id', 'request_id']));
}
