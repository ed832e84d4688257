// Issue 30. The PDP's decision facts (the function of migration 004) also say whether the token's client holds records
// in the token's tenant: the plan ceiling's one exception (docs/decisions.md "Data ownership after a downgrade").
import type { Knex } from 'knex';
import * as m004 from './004_decision_facts_function.js';

const FACTS_SIGNATURE = 'pdp_decision_facts(text[], text[], text[], text[], text[], text[])';

async function replaceDecisionFacts(knex: Knex): Promise<void> {
  await knex.raw(`drop function ${FACTS_SIGNATURE}`);
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

export async function up(knex: Knex): Promise<void> {
  await replaceDecisionFacts(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop function ${FACTS_SIGNATURE}`);
  await m004.up(knex);
}
