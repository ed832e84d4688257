// What a tenant's admins can see after the fact: recent PDP decisions (why a request was denied) and metered calls.
import { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { isId } from '../../common/ids.js';
import { parse } from './support.js';

const DecisionQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(50) });
const USAGE_ITEMS = 100;

const iso = (d: Date | string) => new Date(d).toISOString();

export function observabilityRouter(knex: Knex): Router {
  const r = Router();
  const tenantExists = async (id: string) => isId('ten', id) && Boolean(await knex('tenants').where({ id }).first('id'));

  r.get('/tenants/:tenantId/decisions', async (req, res) => {
    const query = parse(DecisionQuery, { limit: req.query.limit }, res);
    if (!query) return;
    const { tenantId } = req.params;
    if (!(await tenantExists(tenantId))) return sendProblem(res, 'not_found');
    const rows = await knex('decision_logs').where('tenant_id', tenantId).orderBy('id', 'desc').limit(query.limit);
    res.json({
      items: rows.map((d) => ({
        requestId: d.request_id, tenantId: d.tenant_id, clientId: d.client_id, subject: d.subject, capability: d.capability,
        allow: d.allow, code: d.code, checkName: d.check_name, createdAt: iso(d.created_at),
      })),
    });
  });

  r.get('/tenants/:tenantId/usage', async (req, res) => {
    const { tenantId } = req.params;
    if (!(await tenantExists(tenantId))) return sendProblem(res, 'not_found');
    // usage_records is keyed by (tenant, request id), so a count of rows is a count of distinct request ids.
    const counted = await knex('usage_records').where('tenant_id', tenantId).count({ total: '*' }).first();
    const rows = await knex('usage_records').where('tenant_id', tenantId).orderBy('created_at', 'desc').limit(USAGE_ITEMS);
    res.json({
      tenantId,
      total: Number(counted?.total ?? 0),
      items: rows.map((u) => ({
        requestId: u.request_id, clientId: u.client_id, accountId: u.account_id, operationId: u.operation_id, status: u.status,
        createdAt: iso(u.created_at),
      })),
    });
  });
  return r;
}
