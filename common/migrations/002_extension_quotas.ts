// Persons and person extensions: quota limits per plan, a per-(tenant, extension) record counter so the record quota is
// checked and taken in one row update instead of counting a tenant's records, and one extension name per client.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('plans', (t) => {
    // Contract §8 values; an operator may change them per plan.
    t.integer('max_records_per_extension').notNullable().defaultTo(50_000);
    t.integer('max_extensions').notNullable().defaultTo(20);
  });

  // Kept equal to count(*) of person_extensions per (tenant, extension) by the writes that insert or delete records.
  await knex.schema.createTable('extension_record_counts', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('extension_id').notNullable().references('extensions.id');
    t.integer('records').notNullable().defaultTo(0);
    t.primary(['tenant_id', 'extension_id']);
  });

  await knex.schema.alterTable('extensions', (t) => {
    t.unique(['client_id', 'name']);
  });

  // Nothing reads a tenant's records of one extension any more (the counter replaces counting them), and on small
  // tables the planner would pick this index for point lookups, scanning the whole (tenant, extension) range. Every
  // record access goes through the primary key (tenant, person, extension).
  await knex.schema.alterTable('person_extensions', (t) => t.dropIndex(['tenant_id', 'extension_id']));

  // The PDP asks whether an addressed person belongs to another tenant (tenant_mismatch) by person alone.
  await knex.schema.alterTable('tenant_person_relationships', (t) => t.index(['person_id']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('person_extensions', (t) => t.index(['tenant_id', 'extension_id']));
  await knex.schema.alterTable('tenant_person_relationships', (t) => t.dropIndex(['person_id']));
  await knex.schema.alterTable('extensions', (t) => t.dropUnique(['client_id', 'name']));
  await knex.schema.dropTableIfExists('extension_record_counts');
  await knex.schema.alterTable('plans', (t) => {
    t.dropColumn('max_records_per_extension');
    t.dropColumn('max_extensions');
  });
}
