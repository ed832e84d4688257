// The PDP keeps decision facts in memory (policies/fact-cache.ts), valid up to a revision it reads once per batch
// (issue 33; docs/decisions.md "The PDP's facts in memory"). Every change to a row a decision reads advances that
// revision and names the fact it changed, by trigger, so no writer (admin API, console, CLI, issuer, backend, a
// hand-run SQL statement) can change a decision without the PDP seeing it.
//
// - pdp_revision: one row, one counter. A change increments it, so it holds the row's lock until it commits: writers
//   take revisions one at a time, in commit order, and a rolled-back change gives its number back. A reader that sees
//   revision R therefore sees every change numbered R or lower, and each number 1..R is exactly one change.
// - pdp_changes: which fact each revision changed (`client:<id>`, `tenant:<id>`, `account:<id>`, `session:<id>`,
//   `app:<tenant>:<client>`, `person:<id>`, `catalogue`, or `all`), the last KEPT_CHANGES of them. A PDP further
//   behind than that forgets everything it holds.
// - The triggers are constraint triggers deferred to commit: the counter's lock is taken after every other lock of the
//   transaction and held only while it commits, so writers never deadlock on it and wait for each other only briefly.
//   A migration that changes rows of one of these tables and then alters that table in the same transaction must
//   first `set constraints all immediate` (PostgreSQL refuses to alter a table with pending trigger events).
// - The cold read pdp_fact_rows replaces pdp_decision_facts (migrations 004 and 010): the same lookups, returned in the shape
//   the PDP keeps (a person's live relationships as the list of their tenants) rather than one decision's booleans.
import type { Knex } from 'knex';
import { createDecisionFacts } from './010_records_ceiling_and_folded_usernames.js';

/** Changes the log keeps: a PDP this many changes behind reads its facts afresh instead of catching up. */
export const KEPT_CHANGES = 10_000;

/** Each watched table: the fact a row change alters (kind, then the columns naming it) and, if any, when it does. */
const WATCHED: { table: string; fact: string[]; when?: string }[] = [
  { table: 'clients', fact: ['client', 'id'] },
  { table: 'tenants', fact: ['tenant', 'id'] },
  // A plan's level decides the tenants on it and the catalogue's plan floors: everything is read afresh.
  { table: 'plans', fact: ['all'] },
  { table: 'capabilities', fact: ['catalogue'] },
  { table: 'accounts', fact: ['account', 'id'] },
  { table: 'service_account_capabilities', fact: ['account', 'account_id'] },
  { table: 'sessions', fact: ['session', 'id'] },
  { table: 'tenant_grants', fact: ['app', 'tenant_id', 'client_id'] },
  { table: 'tenant_person_relationships', fact: ['person', 'person_id'] },
];

/**
 * The cold read of a batch's facts. `holdsRecords`: with the column saying whether the app holds extension records in
 * the tenant, which the PDP read from here until migration 012 (a token's retained-data scopes now decide, not the
 * records).
 */
export const factRowsFunction = ({ holdsRecords }: { holdsRecords: boolean }): string => `
create function pdp_fact_rows(client_ids text[], tenant_ids text[], account_ids text[], sids text[], person_ids text[],
                              subject_ids text[])
  returns table (n bigint, client json, tenant json, account json, session json, granted json,
                 account_capabilities json, person_tenants json, subject_tenants json, catalogue json${holdsRecords ? ', holds_records boolean' : ''})
  language plpgsql stable
  set plan_cache_mode = force_generic_plan
as $fn$
#variable_conflict use_column
begin
  return query select i.n,
  (select row_to_json(c) from (select tenant_id, kind, status from clients where id = i.client_id) c),
  (select row_to_json(t) from (select t.id, t.status, p.level as plan_level, t.rate_limit
     from tenants t join plans p on p.id = t.plan where t.id = i.tenant_id) t),
  (select row_to_json(a) from (select id, tenant_id, kind, status, epoch, person_id, client_id
     from accounts where id = i.account_id) a),
  (select row_to_json(s) from (select account_id, client_id, revoked_at is not null as revoked
     from sessions where id = i.sid) s),
  (select coalesce(json_agg(capability_id), '[]') from tenant_grants
     where tenant_id = i.tenant_id and client_id = i.client_id),
  (select coalesce(json_agg(capability_id), '[]') from service_account_capabilities where account_id = i.account_id),
  (select coalesce(json_agg(tenant_id), '[]') from tenant_person_relationships
     where person_id = i.person_id and ended_at is null),
  (select coalesce(json_agg(tenant_id), '[]') from tenant_person_relationships
     where person_id = i.subject_id and ended_at is null),
  (select json_agg(x) from (select c.id, c.resource_type, p.level as min_plan_level, c.enabled
     from capabilities c join plans p on p.id = c.min_plan) x)${
       !holdsRecords
         ? ''
         : `,
  exists(select 1 from extensions e join extension_record_counts rc on rc.extension_id = e.id
     where e.client_id = i.client_id and rc.tenant_id = i.tenant_id and rc.records > 0)`
     }
  from unnest(client_ids, tenant_ids, account_ids, sids, person_ids, subject_ids)
    with ordinality as i(client_id, tenant_id, account_id, sid, person_id, subject_id, n)
  order by i.n;
end
$fn$`;

/** The app fact noted when its first extension record is written or its last deleted (until migration 012). */
export async function createRecordCountTriggers(knex: Knex): Promise<void> {
  await knex.raw(`
-- Whether an app holds extension records in a tenant changes only when one of its extensions' counters leaves or
-- returns to zero (the first record written, the last deleted), so a counter's other moves note nothing. The trigger
-- runs at commit: an extension deleted in the same transaction can no longer name its app, so everything is noted.
create function pdp_record_count_changed() returns trigger language plpgsql as $fn$
declare
  tenant text := case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
  app text := (select client_id from extensions
                where id = case when tg_op = 'DELETE' then old.extension_id else new.extension_id end);
begin
  perform pdp_note_change(coalesce('app:' || tenant || ':' || app, 'all'));
  return null;
end
$fn$`);
  const counted = (op: string, when: string) =>
    knex.raw(`
create constraint trigger pdp_fact_${op} after ${op} on extension_record_counts
  deferrable initially deferred for each row when (${when}) execute function pdp_record_count_changed()`);
  await counted('insert', 'new.records > 0');
  await counted('update', '(old.records > 0) <> (new.records > 0)');
  await counted('delete', 'old.records > 0');
  await knex.raw(`
create trigger pdp_fact_truncated after truncate on extension_record_counts
  for each statement execute function pdp_table_truncated()`);
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop function pdp_decision_facts(text[], text[], text[], text[], text[], text[])');
  await knex.raw(`
create table pdp_revision (only_row boolean primary key default true check (only_row), revision bigint not null);
insert into pdp_revision values (true, 0);
create table pdp_changes (revision bigint primary key, fact text not null);

create function pdp_note_change(fact text) returns void language plpgsql as $fn$
declare r bigint;
begin
  update pdp_revision set revision = revision + 1 returning revision into r;
  insert into pdp_changes (revision, fact) values (r, fact);
  delete from pdp_changes where revision = r - ${KEPT_CHANGES};
end
$fn$;

-- The arguments: the fact's kind, then the columns that name it. A row whose naming columns change notes both facts.
create function pdp_row_changed() returns trigger language plpgsql as $fn$
declare
  fact text;
  facts text[] := '{}';
  r jsonb;
begin
  foreach r in array array[case when tg_op <> 'INSERT' then to_jsonb(old) end,
                           case when tg_op <> 'DELETE' then to_jsonb(new) end] loop
    continue when r is null;
    fact := tg_argv[0];
    for i in 1 .. tg_nargs - 1 loop
      fact := fact || ':' || (r ->> tg_argv[i]);
    end loop;
    if not fact = any(facts) then
      facts := facts || fact;
      perform pdp_note_change(fact);
    end if;
  end loop;
  return null;
end
$fn$;

-- TRUNCATE fires no row trigger: whatever it emptied, everything is read afresh.
create function pdp_table_truncated() returns trigger language plpgsql as $fn$
begin
  perform pdp_note_change('all');
  return null;
end
$fn$`);
  for (const { table, fact } of WATCHED) {
    const args = fact.map((a) => `'${a}'`).join(', ');
    await knex.raw(`
create constraint trigger pdp_fact_changed after insert or update or delete on ${table}
  deferrable initially deferred for each row execute function pdp_row_changed(${args})`);
    await knex.raw(`
create trigger pdp_fact_truncated after truncate on ${table} for each statement execute function pdp_table_truncated()`);
  }
  await createRecordCountTriggers(knex);

  await knex.raw(factRowsFunction({ holdsRecords: true }));
}

export async function down(knex: Knex): Promise<void> {
  for (const { table } of [...WATCHED, { table: 'extension_record_counts' }]) {
    await knex.raw(`drop trigger if exists pdp_fact_truncated on ${table}`);
    for (const name of ['pdp_fact_changed', 'pdp_fact_insert', 'pdp_fact_update', 'pdp_fact_delete'])
      await knex.raw(`drop trigger if exists ${name} on ${table}`);
  }
  await knex.raw('drop function pdp_fact_rows(text[], text[], text[], text[], text[], text[])');
  for (const fn of [
    'pdp_row_changed()',
    'pdp_record_count_changed()',
    'pdp_table_truncated()',
    'pdp_note_change(text)',
  ])
    await knex.raw(`drop function ${fn}`);
  await knex.schema.dropTable('pdp_changes');
  await knex.schema.dropTable('pdp_revision');
  await createDecisionFacts(knex);
}
