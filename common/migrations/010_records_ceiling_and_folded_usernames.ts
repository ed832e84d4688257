// Two changes of issue 30.
// 1. The PDP's decision facts (the function of migration 004) also say whether the token's client holds records in
//    the token's tenant: the plan ceiling's one exception (docs/decisions.md "Data ownership after a downgrade").
// 2. Usernames are unique per tenant in their comparison form (common/usernames.ts): the column username_folded and
//    a unique index on (tenant_id, username_folded). Existing names that collide once folded are neither refused nor
//    merged: the oldest account of each folded name owns it, the others keep username_folded null and sign in with
//    their exact spelling only (docs/decisions.md "Usernames: one person per name, whatever its case").
import type { Knex } from 'knex';
import { foldUsername } from '../usernames.js';
import * as m004 from './004_decision_facts_function.js';

const FACTS_SIGNATURE = 'pdp_decision_facts(text[], text[], text[], text[], text[], text[])';

/** This migration's pdp_decision_facts (also what migration 011's down restores). */
export async function createDecisionFacts(knex: Knex): Promise<void> {
  await knex.raw(`
create function pdp_decision_facts(client_ids text[], tenant_ids text[], account_ids text[], sids text[], person_ids text[], subject_ids text[])
  returns table (n bigint, client json, tenant json, account json, session json, granted json, account_capabilities json,
                 catalogue json, relationship boolean, subject_relationship boolean, person_of_other_tenant boolean,
                 holds_records boolean)
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
  (select coalesce(json_agg(capability_id), '[]') from tenant_grants where tenant_id = i.tenant_id and client_id = i.client_id),
  (select coalesce(json_agg(capability_id), '[]') from service_account_capabilities where account_id = i.account_id),
  (select json_agg(x) from (select c.id, c.resource_type, p.level as min_plan_level, c.enabled
     from capabilities c join plans p on p.id = c.min_plan) x),
  exists(select 1 from tenant_person_relationships
     where tenant_id = i.tenant_id and person_id = i.person_id and ended_at is null),
  exists(select 1 from tenant_person_relationships
     where tenant_id = i.tenant_id and person_id = i.subject_id and ended_at is null),
  exists(select 1 from tenant_person_relationships
     where person_id = i.person_id and tenant_id <> i.tenant_id and ended_at is null),
  exists(select 1 from extensions e join extension_record_counts rc on rc.extension_id = e.id
     where e.client_id = i.client_id and rc.tenant_id = i.tenant_id and rc.records > 0)
  from unnest(client_ids, tenant_ids, account_ids, sids, person_ids, subject_ids)
    with ordinality as i(client_id, tenant_id, account_id, sid, person_id, subject_id, n)
  order by i.n;
end
$fn$`);
}

/** Accounts folded per statement: memory stays at one page, whatever the number of accounts. */
const PAGE = 5000;

/**
 * Folds every username, then leaves the folded name only on the oldest account of each (tenant, folded name): a later
 * one that collides with it keeps null.
 */
async function foldExistingUsernames(knex: Knex): Promise<void> {
  for (let after = ''; ;) {
    const rows: { id: string; username: string }[] = await knex('accounts')
      .whereNotNull('username')
      .andWhere('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .select('id', 'username');
    if (!rows.length) break;
    await knex.raw(
      'update accounts a set username_folded = f.name ' +
        'from unnest(?::text[], ?::text[]) as f(id, name) where a.id = f.id',
      [rows.map((r) => r.id), rows.map((r) => foldUsername(r.username))],
    );
    after = rows.at(-1)!.id;
  }
  await knex.raw(`
update accounts set username_folded = null where id in (
  select id from (select id, row_number() over (partition by tenant_id, username_folded order by created_at, id) as nth
    from accounts where username_folded is not null) ranked
  where nth > 1)`);
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`drop function ${FACTS_SIGNATURE}`);
  await createDecisionFacts(knex);
  await knex.schema.alterTable('accounts', (t) => t.text('username_folded'));
  await foldExistingUsernames(knex);
  await knex.schema.alterTable('accounts', (t) => t.unique(['tenant_id', 'username_folded']));
  // A sign-in without a tenant (connected apps) looks the name up across tenants: folded, or exactly as spelled for
  // the few accounts left without a folded name.
  await knex.schema.alterTable('accounts', (t) => t.index(['username_folded']));
  await knex.raw(
    'create index accounts_exact_case_usernames on accounts (username) ' +
      'where username_folded is null and username is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index accounts_exact_case_usernames');
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('username_folded'));
  await knex.raw(`drop function ${FACTS_SIGNATURE}`);
  await m004.up(knex);
}
