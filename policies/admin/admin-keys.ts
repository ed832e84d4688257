// Tenant admin keys: created and revoked by the operator only (policies/admin/authority.ts).
import { Router } from 'express';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { isId } from '../../common/ids.js';
import { issueTenantAdminKey, revokeTenantAdminKey } from './admin-key-store.js';

export function adminKeysRouter(knex: Knex): Router {
  const r = Router();
  r.post('/tenants/:tenantId/admin-keys', async (req, res) => {
    const { tenantId } = req.params;
    if (!isId('ten', tenantId) || !(await knex('tenants').where({ id: tenantId }).first('id'))) return sendProblem(res, 'not_found');
    res.status(201).json(await issueTenantAdminKey(knex, tenantId));
  });
  r.delete('/tenants/:tenantId/admin-keys/:keyId', async (req, res) => {
    if (!(await revokeTenantAdminKey(knex, req.params.tenantId, req.params.keyId))) return sendProblem(res, 'not_found');
    res.status(204).end();
  });
  return r;
}
