// Everything one decision needs, read in a single round trip. No caching: a revocation shows on the next request.
import type { Knex } from 'knex';
import { preparedQuery } from '../common/db.js';
import { isId } from '../common/ids.js';
import type { Capability, DecisionInput, RateLimitPolicy } from './decision.js';

export interface CatalogueEntry {
  id: Capability;
  resource_type: string;
  min_plan_level: number;
  enabled: boolean;
}

export interface DecisionFacts {
  client: { tenant_id: string; kind: string; status: string } | null;
  tenant: { id: string; status: string; plan_level: number; rate_limit: RateLimitPolicy | null } | null;
  account: { id: string; tenant_id: string; kind: string; status: string; epoch: number; person_id: string | null; client_id: string | null } | null;
  session: { account_id: string; client_id: string; revoked: boolean } | null;
  granted: Capability[];
  accountCapabilities: Capability[];
  catalogue: CatalogueEntry[];
  /** The addressed person (if any) has a live relationship with the token's tenant. */
  relationship: boolean;
  /** The addressed person has a live relationship with some other tenant. */
  personOfOtherTenant: boolean;
  /** The token's subject has a live relationship with the token's tenant (meaningful for self tokens). */
  subjectRelationship: boolean;
}

export interface PolicyStore {
  facts(input: DecisionInput): Promise<DecisionFacts>;
}

/** $1 client, $2 tenant, $3 acting account, $4 session (sid), $5 addressed person, $6 subject. */
const FACTS_SQL = `select
  (select row_to_json(c) from (select tenant_id, kind, status from clients where id = $1) c) as client,
  (select row_to_json(t) from (select t.id, t.status, p.level as plan_level, t.rate_limit
     from tenants t join plans p on p.id = t.plan where t.id = $2) t) as tenant,
  (select row_to_json(a) from (select id, tenant_id, kind, status, epoch, person_id, client_id
     from accounts where id = $3) a) as account,
  (select row_to_json(s) from (select account_id, client_id, revoked_at is not null as revoked
     from sessions where id = $4) s) as session,
  (select coalesce(json_agg(capability_id), '[]') from tenant_grants where tenant_id = $2 and client_id = $1) as granted,
  (select coalesce(json_agg(capability_id), '[]') from service_account_capabilities where account_id = $3) as account_capabilities,
  (select json_agg(x) from (select c.id, c.resource_type, p.level as min_plan_level, c.enabled
     from capabilities c join plans p on p.id = c.min_plan) x) as catalogue,
  exists(select 1 from tenant_person_relationships
     where tenant_id = $2 and person_id = $5 and ended_at is null) as relationship,
  exists(select 1 from tenant_person_relationships
     where tenant_id = $2 and person_id = $6 and ended_at is null) as subject_relationship,
  exists(select 1 from tenant_person_relationships
     where person_id = $5 and tenant_id <> $2 and ended_at is null) as person_of_other_tenant`;

export function knexPolicyStore(knex: Knex): PolicyStore {
  return {
    async facts({ token, resource }) {
      const [r] = await preparedQuery(knex, 'pdp_decision_facts', FACTS_SQL, [
        // A personId that is not one cannot name a person: looked up as none (and never sent to SQL as odd text).
        token.client_id, token.tenant_id, token.actor_account_id ?? null, token.sid ?? null,
        isId('psn', resource.personId) ? resource.personId : null, token.sub,
      ]);
      return {
        client: r!.client,
        tenant: r!.tenant,
        account: r!.account,
        session: r!.session,
        granted: r!.granted,
        accountCapabilities: r!.account_capabilities,
        catalogue: r!.catalogue ?? [],
        relationship: r!.relationship,
        subjectRelationship: r!.subject_relationship,
        personOfOtherTenant: r!.person_of_other_tenant,
      } as DecisionFacts;
    },
  };
}
