// The PDP's decision read (policies/store.ts) as a function planned once per session.
// Called as a prepared statement with array parameters, the same query was planned afresh on every execution:
// PostgreSQL keeps choosing a custom plan, because its generic plan is estimated for 100 array elements where the
// custom plan sees the real few, and planning this query (a dozen subqueries) cost ~0.65 ms against ~0.2 ms to run it.
// PL/pgSQL caches the plan of its query per session, and the function's own `plan_cache_mode` makes that the
// generic plan, for this query only (a session-wide setting would change every other statement's plans, and would
// not survive a transaction-mode pooler). The plan is the same either way: one index lookup per subquery and input.
// The query's text lives here: a change to it is a new migration that replaces the function.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
create function pdp_decision_facts(client_ids text[], tenant_ids text[], account_ids text[], sids text[], person_ids text[], subject_ids text[])
  returns table (n bigint, client json, tenant json, account json, session json, granted json, account_capabilities json,
                 catalogue json, relationship boolean, subject_relationship boolean, person_of_other_tenant boolean)
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
     where person_id = i.person_id and tenant_id <> i.tenant_id and ended_at is null)
  from unnest(client_ids, tenant_ids, account_ids, sids, person_ids, subject_ids)
    with ordinality as i(client_id, tenant_id, account_id, sid, person_id, subject_id, n)
  order by i.n;
end
$fn$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists pdp_decision_facts(text[], text[], text[], text[], text[], text[])');
}
