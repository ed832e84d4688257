// Response bodies exactly as the contract's objects (§2): listed fields only.
import type { CallContext } from '../common/internal-context.js';
import type { TenantRecord } from './repository.js';

export const meOf = (c: CallContext) => ({
  subjectType: c.subjectType,
  subjectId: c.subjectId,
  tenantId: c.tenantId,
  clientId: c.clientId,
  scopes: c.scopes,
  actor: { accountId: c.actorAccountId },
});

export const tenantOf = (t: TenantRecord) => ({ tenantId: t.tenantId, displayName: t.displayName });

export interface PersonRow {
  id: string;
  display_name: string;
  created_at: Date;
}
export const personOf = (p: PersonRow) => ({
  personId: p.id,
  displayName: p.display_name,
  createdAt: new Date(p.created_at).toISOString(),
});
