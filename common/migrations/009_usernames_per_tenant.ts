// Usernames are unique per tenant, not across the platform (issue 20: creating `alice` in one tenant answered 409
// because another tenant had one, so tenants could learn and squat each other's sign-in names). The login page knows
// the tenant from the client being authorized.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.dropUnique(['username']);
    t.unique(['tenant_id', 'username']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.dropUnique(['tenant_id', 'username']);
    t.unique(['username']);
  });
}
