// Which capabilities a client may receive in a token: the tenant's grant to the client ∩ the tenant plan's ceiling
// ∩ the capabilities open on this deployment (contract §1 rule 3, minus the per-request parts the PDP checks). The
// capabilities over the app's own stored records pass the ceiling only while its extensions hold records in the
// tenant: after a downgrade the app still reads and deletes what it stored, and writes are refused with the write
// (docs/decisions.md "Data ownership after a downgrade").
import type { Knex } from 'knex';
import { fixedStatement } from '../common/db.js';
import { CAPABILITIES, RETAINED_DATA_CAPABILITIES, type Capability } from '../wire/decision.js';

/** The single resource server this issuer mints tokens for; an indicator must be an absolute URI. */
export const API_RESOURCE = 'urn:svc-api';
export const API_AUDIENCE = 'svc-api';

const ORDER = new Map<string, number>(CAPABILITIES.map((c, i) => [c, i]));
const byCatalogueOrder = (a: string, b: string) => (ORDER.get(a) ?? 99) - (ORDER.get(b) ?? 99);

/** The client's extensions hold at least one record in the grant's tenant (the counters are kept with the records). */
const HOLDS_RECORDS =
  'exists (select 1 from extensions e join extension_record_counts rc on rc.extension_id = e.id ' +
  'where e.client_id = g.client_id and rc.tenant_id = g.tenant_id and rc.records > 0)';

/** The capabilities granted to the client that its tenant's plan and this deployment allow: a query of `id`s. */
const grantedCapabilities = (knex: Knex, clientId: string) =>
  knex('tenant_grants as g')
    .join('clients as cl', function () {
      this.on('cl.id', '=', 'g.client_id').andOn('cl.tenant_id', '=', 'g.tenant_id');
    })
    .join('tenants as t', 't.id', 'g.tenant_id')
    .join('plans as tp', 'tp.id', 't.plan')
    .join('capabilities as c', 'c.id', 'g.capability_id')
    .join('plans as cp', 'cp.id', 'c.min_plan')
    .where('g.client_id', clientId)
    .andWhere('c.enabled', true)
    .andWhere(
      (q) =>
        void q
          .whereRaw('cp.level <= tp.level')
          .orWhere(
            (retained) => void retained.whereIn('c.id', [...RETAINED_DATA_CAPABILITIES]).andWhereRaw(HOLDS_RECORDS),
          ),
    )
    .select('c.id');

/**
 * The same capabilities as a JSON array column named `allowed`, for statements that read them with other facts of the
 * same request (accounts.ts, service-accounts.ts); inCatalogueOrder makes them what allowedCapabilities returns.
 */
export const allowedCapabilitiesColumn = (knex: Knex, clientId: string) =>
  knex.raw(`(select coalesce(json_agg(x.id), '[]'::json) from (?) x) as allowed`, [
    grantedCapabilities(knex, clientId),
  ]);

/** Capability ids of the catalogue, in its order. */
export const inCatalogueOrder = (ids: readonly string[]): Capability[] =>
  ids.filter((id): id is Capability => ORDER.has(id)).sort(byCatalogueOrder);

const allowed = fixedStatement<[string], { id: string }>(grantedCapabilities);

export async function allowedCapabilities(knex: Knex, clientId: string): Promise<Capability[]> {
  const { rows } = await allowed(knex, clientId);
  return inCatalogueOrder(rows.map((r) => r.id));
}

export interface CapabilityInfo {
  id: string;
  description: string;
}

/** Catalogue descriptions for the consent page, in catalogue order. */
export async function describeCapabilities(knex: Knex, ids: readonly string[]): Promise<CapabilityInfo[]> {
  if (ids.length === 0) return [];
  const rows: CapabilityInfo[] = await knex('capabilities')
    .whereIn('id', [...ids])
    .select('id', 'description');
  return rows.sort((a, b) => byCatalogueOrder(a.id, b.id));
}

export const splitScope = (scope: unknown): string[] =>
  typeof scope === 'string' ? [...new Set(scope.split(' ').filter(Boolean))] : [];
