import { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { CAPABILITIES } from '../decision.js';
import { parse } from './support.js';

const PutGrant = z.strictObject({ capabilities: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length) });

/** A tenant's grant of capabilities to one app: replaced whole by PUT, withdrawn by DELETE. */
export function grantsRouter(knex: Knex): Router {
  const r = Router();
  const client = (tenantId: string, clientId: string) => knex('clients').where({ id: clientId, tenant_id: tenantId }).first();
  const capabilitiesOf = async (tenantId: string, clientId: string) =>
    (await knex('tenant_grants').where({ tenant_id: tenantId, client_id: clientId }).orderBy('capability_id')).map((g) => g.capability_id as string);

  r.put('/tenants/:tenantId/grants/:clientId', async (req, res) => {
    const body = parse(PutGrant, req.body, res);
    if (!body) return;
    const { tenantId, clientId } = req.params;
    if (!(await client(tenantId, clientId))) return sendProblem(res, 'not_found');
    const capabilities = [...new Set(body.capabilities)].sort();
    await knex.transaction(async (trx) => {
      // Concurrent replacements of one grant queue on the client row instead of racing delete-then-insert.
      await trx('clients').where({ id: clientId }).forUpdate().first();
      await trx('tenant_grants').where({ tenant_id: tenantId, client_id: clientId }).delete();
      if (capabilities.length)
        await trx('tenant_grants').insert(capabilities.map((c) => ({ tenant_id: tenantId, client_id: clientId, capability_id: c })));
    });
    res.json({ tenantId, clientId, capabilities });
  });
  r.get('/tenants/:tenantId/grants/:clientId', async (req, res) => {
    const { tenantId, clientId } = req.params;
    if (!(await client(tenantId, clientId))) return sendProblem(res, 'not_found');
    res.json({ tenantId, clientId, capabilities: await capabilitiesOf(tenantId, clientId) });
  });
  r.delete('/tenants/:tenantId/grants/:clientId', async (req, res) => {
    const { tenantId, clientId } = req.params;
    if (!(await client(tenantId, clientId))) return sendProblem(res, 'not_found');
    await knex('tenant_grants').where({ tenant_id: tenantId, client_id: clientId }).delete();
    res.status(204).end();
  });
  return r;
}
