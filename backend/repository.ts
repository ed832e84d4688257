// Storage behind a small interface, so handlers never see SQL and the same code runs on PGlite and PostgreSQL.
import type { Knex } from 'knex';

export interface TenantRecord {
  tenantId: string;
  displayName: string;
}

export interface DomainRepository {
  tenant(tenantId: string): Promise<TenantRecord | undefined>;
}

export function knexRepository(knex: Knex): DomainRepository {
  return {
    async tenant(tenantId) {
      const row = await knex('tenants').select('id', 'display_name').where({ id: tenantId }).first();
      return row && { tenantId: row.id, displayName: row.display_name };
    },
  };
}
