// Admin console sessions in the database, so every admin-service replica (the shipped manifests run two) and a
// restarted one know them. Only a hash of the session id is stored; times are the server's clock in milliseconds.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('console_sessions', (t) => {
    t.text('id_hash').primary();
    t.text('csrf').notNullable();
    /** The admin caller once signed in (operator, or a tenant admin key's tenant and key id); null before. */
    t.jsonb('caller');
    /** One message for the next page shown. */
    t.text('notice');
    t.bigInteger('created_at').notNullable().index();
    t.bigInteger('idle_until').notNullable();
    t.bigInteger('ends_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('console_sessions');
}
