// The subject of a workload token: the tenant's service account for the authenticated client (contract §5.7: the
// client credential identifies the program, `sub` is the service account). Migration 003 allows one per client.
import type { Knex } from 'knex';
import { runPrepared } from '../common/db.js';
import type { Capability } from '../wire/decision.js';

export interface ServiceAccount {
  id: string;
  tenantId: string;
  epoch: number;
  capabilities: Capability[];
}

/**
 * The client's active service account with its capabilities, read fresh at every issuance (one statement);
 * undefined when it has none or it is disabled.
 */
export async function activeServiceAccountOf(knex: Knex, clientId: string): Promise<ServiceAccount | undefined> {
  const capabilities = knex('service_account_capabilities as sc')
    .whereRaw('sc.account_id = a.id')
    .select(knex.raw(`coalesce(json_agg(sc.capability_id), '[]'::json)`));
  const {
    rows: [row],
  } = await runPrepared<{ id: string; tenant_id: string; epoch: number | string; capabilities: Capability[] }>(
    knex,
    knex('accounts as a')
      .where({ 'a.client_id': clientId, 'a.kind': 'service', 'a.status': 'active' })
      .first('a.id', 'a.tenant_id', 'a.epoch', knex.raw('(?) as capabilities', [capabilities])),
  );
  if (!row) return undefined;
  return { id: row.id, tenantId: row.tenant_id, epoch: Number(row.epoch), capabilities: row.capabilities };
}
