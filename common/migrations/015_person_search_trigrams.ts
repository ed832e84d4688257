// Person search finds a part of a name or username anywhere, in any case (issue 51): `ilike '%part%'` on the
// persons list. Trigram GIN indexes (pg_trgm) serve it, on PostgreSQL and on PGlite, which loads the same extension
// (common/db.ts); a B-tree cannot serve a pattern that does not start with its first characters.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  await knex.raw('create index persons_display_name_trigrams on persons using gin (display_name gin_trgm_ops)');
  await knex.raw('create index accounts_username_trigrams on accounts using gin (username gin_trgm_ops)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index accounts_username_trigrams');
  await knex.raw('drop index persons_display_name_trigrams');
}
