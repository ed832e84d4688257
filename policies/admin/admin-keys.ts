// Tenant admin keys: created and revoked by the operator only (policies/admin/authority.ts).
import { Router } from 'express';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { isId } from '../../common/ids.js';
import { issueTenantAdminKey, revokeTenantAdminKey } from './admin-key-store.js';
import { REDACTED, recordChange } from './audit.js';

export function adminKeysRouter(knex: Knex): Router {
  const r = Router();
  r.post('/tenants/:tenantId/admin-keys', async (req, res) => {
    const { tenantId } = req.params;
    if (!isId('ten', tenantId) || !(await knex('tenants').where({ id: tenantId }).first('id'))) return sendProblem(res, 'not_found');
    const issued = await issueTenantAdminKey(knex, tenantId);
    await recordChange({ action: 'admin_key.create', target: { type: 'admin_key', id: issued.keyId }, tenantId, changes: { key: { from: null, to: REDACTED } } });
    res.status(201).json(issued);
  });
  r.delete('/tenants/:tenantId/admin-keys/:keyId', async (req, res) => {
    const { tenantId, keyId } = req.params;
    if (!(await revokeTenantAdminKey(knex, tenantId, keyId))) return sendProblem(res, 'not_found');
    await recordChange({ action: 'admin_key.revoke', target: { type: 'admin_key', id: keyId }, tenantId, changes: { key: { from: REDACTED, to: null } } });
    res.status(204).end();
  });
  return r;
}
