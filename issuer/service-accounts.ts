// The subject of a workload token: the tenant's service account for the authenticated client (contract §5.7: the
// client credential identifies the program, `sub` is the service account). Migration 003 allows one per client.
import type { Knex } from 'knex';
import { fixedStatement } from '../common/db.js';
import type { Capability } from '../wire/decision.js';
import { allowedCapabilitiesColumn, inCatalogueOrder } from './scope-policy.js';

export interface ServiceAccount {
  id: string;
  tenantId: string;
  epoch: number;
  capabilities: Capability[];
  /** What the client may be given (scope-policy.ts allowedCapabilities), read in the same statement. */
  clientAllows: Capability[];
}

const activeServiceAccount = fixedStatement<
  [string],
  { id: string; tenant_id: string; epoch: number | string; capabilities: Capability[]; allowed: string[] }
>((knex, clientId) => {
  const capabilities = knex('service_account_capabilities as sc')
    .whereRaw('sc.account_id = a.id')
    .select(knex.raw(`coalesce(json_agg(sc.capability_id), '[]'::json)`));
  return knex('accounts as a')
    .where({ 'a.client_id': clientId, 'a.kind': 'service', 'a.status': 'active' })
    .first(
      'a.id',
      'a.tenant_id',
      'a.epoch',
      knex.raw('(?) as capabilities', [capabilities]),
      allowedCapabilitiesColumn(knex, clientId),
    );
});

/**
 * The client's active service account with its capabilities, read fresh at every issuance (one statement);
 * undefined when it has none or it is disabled.
 */
export async function activeServiceAccountOf(knex: Knex, clientId: string): Promise<ServiceAccount | undefined> {
  const {
    rows: [row],
  } = await activeServiceAccount(knex, clientId);
  if (!row) return undefined;
  return {
    id: row.id,
    tenantId: row.tenant_id,
    epoch: Number(row.epoch),
    capabilities: row.capabilities,
    clientAllows: inCatalogueOrder(row.allowed),
  };
}
