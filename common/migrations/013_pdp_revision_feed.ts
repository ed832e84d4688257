// The revision a change commits is told to the writer (issue 33): pdp_note_change raises it as an INFO message, which
// PostgreSQL sends on the writer's own connection before the statement (or COMMIT) completes, whatever level the
// session's client_min_messages asks for. The writer's process publishes it to the PDPs' revision feed before the
// change is acknowledged (common/revision-feed.ts), so a PDP needs no database reading to know that nothing changed.
// feed_id names this database's feed, so that databases sharing one Redis (tests, staging beside production) never
// read each other's revisions.
import type { Knex } from 'knex';
import { KEPT_CHANGES } from './011_pdp_fact_revisions.js';

const noteChange = (raise: boolean) => `
create or replace function pdp_note_change(fact text) returns void language plpgsql as $fn$
declare r bigint;
begin
  update pdp_revision set revision = revision + 1 returning revision into r;
  insert into pdp_changes (revision, fact) values (r, fact);
  delete from pdp_changes where revision = r - ${KEPT_CHANGES};${raise ? "\n  raise info 'pdp_revision %', r;" : ''}
end
$fn$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table pdp_revision add column feed_id text not null default gen_random_uuid()::text');
  await knex.raw(noteChange(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(noteChange(false));
  await knex.raw('alter table pdp_revision drop column feed_id');
}
