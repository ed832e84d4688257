// The capability catalogue's deployment switch: a closed capability is 403 capability_unavailable on the next API
// request and is no longer issued in tokens. Operator only (policies/admin/authority.ts). Also the catalogue as the
// console lists it.
import { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { reply, validate } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
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

/** Opens or closes a capability on this deployment (operator only): the next API request sees it. */
export async function setCapability(
  knex: Knex,
  capability: string,
  body: unknown,
): Promise<Outcome<{ capability: string; enabled: boolean }>> {
  const parsed = validate(UpdateCapability, body);
  if (!parsed.ok) return parsed;
  const before = await knex('capabilities').where('id', capability).forUpdate().first('enabled');
  if (!before) return refused('not_found');
  const [row] = await knex('capabilities')
    .where('id', capability)
    .update({ enabled: parsed.value.enabled })
    .returning(['id', 'enabled']);
  await recordChange({
    action: row.enabled ? 'capability.open' : 'capability.close',
    target: { type: 'capability', id: row.id },
    tenantId: null,
    changes: before.enabled === row.enabled ? undefined : { enabled: { from: before.enabled, to: row.enabled } },
  });
  return done({ capability: row.id, enabled: row.enabled });
}

export function capabilitiesRouter(knex: Knex): Router {
  const r = Router();
  r.patch('/capabilities/:capability', async (req, res) =>
    reply(res, await setCapability(knex, req.params.capability, req.body)),
  );
  return r;
}
