// Everything one decision needs, read in a single round trip. No caching: a revocation shows on the next request.
import type { Knex } from 'knex';
import { preparedQuery } from '../common/db.js';
import { isId } from '../common/ids.js';
import type { Capability, DecisionInput, RateLimitPolicy } from '../wire/decision.js';

export interface CatalogueEntry {
  id: Capability;
  resource_type: string;
  min_plan_level: number;
  enabled: boolean;
}

export interface DecisionFacts {
  client: { tenant_id: string; kind: string; status: string } | null;
  tenant: { id: string; status: string; plan_level: number; rate_limit: RateLimitPolicy | null } | null;
  account: {
    id: string;
    tenant_id: string;
    kind: string;
    status: string;
    epoch: number;
    person_id: string | null;
    client_id: string | null;
  } | null;
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
  /** The token's client has extension records stored in the token's tenant (the plan ceiling's one exception). */
  holdsRecords: boolean;
}

export interface PolicyStore {
  facts(input: DecisionInput): Promise<DecisionFacts>;
}

/**
 * The facts of many decisions in one statement: one row per input, in input order. The inputs are arrays (one per
 * column), so every batch size is the same statement, prepared once per connection. The query is the function
 * pdp_decision_facts (migration 004, replaced by 010), so PostgreSQL plans it once per session instead of on every call.
 */
const FACTS_SQL = 'select * from pdp_decision_facts($1, $2, $3, $4, $5, $6)';

/** Most decisions one statement carries; a larger backlog goes out as several statements at once. */
const MAX_BATCH = 64;

interface Pending {
  input: DecisionInput;
  resolve(facts: DecisionFacts): void;
  reject(err: unknown): void;
}

/** The statement's parameters: one array per input column. */
function columnsOf(batch: Pending[]): (string | null)[][] {
  const columns: (string | null)[][] = [[], [], [], [], [], []];
  for (const {
    input: { token, resource },
  } of batch) {
    // A personId that is not one cannot name a person: looked up as none (and never sent to SQL as odd text).
    const row = [
      token.client_id,
      token.tenant_id,
      token.actor_account_id ?? null,
      token.sid ?? null,
      isId('psn', resource.personId) ? resource.personId : null,
      token.sub,
    ];
    row.forEach((v, i) => columns[i]!.push(v));
  }
  return columns;
}

const factsOf = (r: Record<string, unknown>): DecisionFacts =>
  ({
    client: r.client,
    tenant: r.tenant,
    account: r.account,
    session: r.session,
    granted: r.granted,
    accountCapabilities: r.account_capabilities,
    catalogue: r.catalogue ?? [],
    relationship: r.relationship,
    subjectRelationship: r.subject_relationship,
    personOfOtherTenant: r.person_of_other_tenant,
    holdsRecords: r.holds_records,
  }) as DecisionFacts;

/**
 * Decisions asked for in the same event-loop turn are read together, in one statement per MAX_BATCH, when the turn
 * ends. Each is read after it was asked for, from the database as it is then: nothing is kept between batches.
 */
export function knexPolicyStore(knex: Knex): PolicyStore {
  let pending: Pending[] = [];

  async function run(batch: Pending[]): Promise<void> {
    try {
      const { rows } = await preparedQuery(knex, 'pdp_decision_facts', FACTS_SQL, columnsOf(batch));
      batch.forEach((p, i) => p.resolve(factsOf(rows[i]!)));
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
  function flush(): void {
    const all = pending;
    pending = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) void run(all.slice(i, i + MAX_BATCH));
  }
  return {
    facts: (input) =>
      new Promise((resolve, reject) => {
        if (pending.push({ input, resolve, reject }) === 1) setImmediate(flush);
      }),
  };
}
