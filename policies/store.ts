// Everything one decision needs, read in a single round trip. No caching: a revocation shows on the next request.
import type { Knex } from 'knex';
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
  relationship: boolean;
}

export interface PolicyStore {
  facts(input: DecisionInput): Promise<DecisionFacts>;
}

export function knexPolicyStore(knex: Knex): PolicyStore {
  return {
    async facts(input) {
      const { token, resource } = input;
      const { rows } = await knex.raw(
        `select
          (select row_to_json(c) from (select tenant_id, kind, status from clients where id = :client) c) as client,
          (select row_to_json(t) from (select t.id, t.status, p.level as plan_level, t.rate_limit
             from tenants t join plans p on p.id = t.plan where t.id = :tenant) t) as tenant,
          (select row_to_json(a) from (select id, tenant_id, kind, status, epoch, person_id, client_id
             from accounts where id = :account) a) as account,
          (select row_to_json(s) from (select account_id, client_id, revoked_at is not null as revoked
             from sessions where id = :sid) s) as session,
          (select coalesce(json_agg(capability_id), '[]') from tenant_grants where tenant_id = :tenant and client_id = :client) as granted,
          (select coalesce(json_agg(capability_id), '[]') from service_account_capabilities where account_id = :account) as account_capabilities,
          (select json_agg(x) from (select c.id, c.resource_type, p.level as min_plan_level, c.enabled
             from capabilities c join plans p on p.id = c.min_plan) x) as catalogue,
          exists(select 1 from tenant_person_relationships
             where tenant_id = :tenant and person_id = :person and ended_at is null) as relationship`,
        {
          client: token.client_id,
          tenant: token.tenant_id,
          account: token.actor_account_id ?? null,
          sid: token.sid ?? null,
          person: resource.personId ?? null,
        },
      );
      const r = rows[0];
      return {
        client: r.client,
        tenant: r.tenant,
        account: r.account,
        session: r.session,
        granted: r.granted,
        accountCapabilities: r.account_capabilities,
        catalogue: r.catalogue ?? [],
        relationship: r.relationship,
      };
    },
  };
}
