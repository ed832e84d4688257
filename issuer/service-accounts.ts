// The subject of a workload token: the tenant's service account for the authenticated client (contract §5.7: the
// client credential identifies the program, `sub` is the service account). Migration 003 allows one per client.
import type { Knex } from 'knex';
import type { Capability } from '../wire/decision.js';

export interface ServiceAccount {
  id: string;
  tenantId: string;
  epoch: number;
  capabilities: Capability[];
}

/** The client's active service account, read fresh at every issuance; undefined when it has none or it is disabled. */
export async function activeServiceAccountOf(knex: Knex, clientId: string): Promise<ServiceAccount | undefined> {
  const row = await knex('accounts')
    .where({ client_id: clientId, kind: 'service', status: 'active' })
    .first('id', 'tenant_id', 'epoch');
  if (!row) return undefined;
  const caps = await knex('service_account_capabilities').where('account_id', row.id).pluck('capability_id');
  return { id: row.id, tenantId: row.tenant_id, epoch: Number(row.epoch), capabilities: caps as Capability[] };
}
