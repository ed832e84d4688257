// The capability catalogue's deployment switch: a closed capability is 403 capability_unavailable on the next API
// request and is no longer issued in tokens. Operator only (policies/admin/authority.ts). Also the catalogue as the
// console lists it.
import { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { parse } from './support.js';
import { recordChange } from './audit.js';
import { CAPABILITIES } from '../../wire/decision.js';

const UpdateCapability = z.strictObject({ enabled: z.boolean() });

/** The catalogue with each capability's description, in the contract's order (the console's grant form). */
export async function capabilityCatalogue(
  knex: Knex,
): Promise<{ id: string; description: string; enabled: boolean }[]> {
  const rows: { id: string; description: string; enabled: boolean }[] = await knex('capabilities').select(
    'id',
    'description',
    'enabled',
  );
  const order = (id: string) => (CAPABILITIES as readonly string[]).indexOf(id);
  return rows.sort((a, b) => order(a.id) - order(b.id));
}

export function capabilitiesRouter(knex: Knex): Router {
  const r = Router();
  r.patch('/capabilities/:capability', async (req, res) => {
    const body = parse(UpdateCapability, req.body, res);
    if (!body) return;
    const before = await knex('capabilities').where('id', req.params.capability).forUpdate().first('enabled');
    const [row] = await knex('capabilities')
      .where('id', req.params.capability)
      .update({ enabled: body.enabled })
      .returning(['id', 'enabled']);
    if (!row) return sendProblem(res, 'not_found');
    await recordChange({
      action: row.enabled ? 'capability.open' : 'capability.close',
      target: { type: 'capability', id: row.id },
      tenantId: null,
      changes: before.enabled === row.enabled ? undefined : { enabled: { from: before.enabled, to: row.enabled } },
    });
    res.json({ capability: row.id, enabled: row.enabled });
  });
  return r;
}
