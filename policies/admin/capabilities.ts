// The capability catalogue's deployment switch: a closed capability is 403 capability_unavailable on the next API
// request and is no longer issued in tokens. Operator only (policies/admin/authority.ts). Also the catalogue, which any
// admin caller reads, and as the console lists it.
import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { adminRoutes, reply, validate } from './support.js';
import { ifMatchOf, replyTagged, staleUnless } from './etags.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { recordChange } from './audit.js';
import { CAPABILITIES, RETAINED_DATA_CAPABILITIES, type Capability } from '../../wire/decision.js';

const UpdateCapability = z.strictObject({ enabled: z.boolean() });

export interface CatalogueEntryView {
  id: string;
  description: string;
  enabled: boolean;
  /** The lowest plan that includes it. */
  minPlan: string;
  /**
   * What `plan` lacks for it, as the PDP decides (policies/evaluate.ts): `excluded` is refused outright
   * (plan_capability_excluded), `writes` keeps reading and deleting stored records and refuses new ones.
   */
  belowPlan: 'excluded' | 'writes' | null;
}

/** A capability as the catalogue states it (contract §9 rule 7), with whether this deployment has it open. */
export interface CapabilityView {
  id: string;
  description: string;
  resourceType: string;
  minPlan: string;
  availability: 'planned' | 'preview' | 'ga';
  catalogueVersion: string;
  enabled: boolean;
}

const order = (id: string) => (CAPABILITIES as readonly string[]).indexOf(id);

/** The catalogue in the contract's order (GET /admin/v1/capabilities: any admin caller reads it). */
export async function catalogue(knex: Knex): Promise<CapabilityView[]> {
  const rows = await knex('capabilities').select('*');
  return rows
    .sort((a, b) => order(a.id) - order(b.id))
    .map((r) => ({
      id: r.id,
      description: r.description,
      resourceType: r.resource_type,
      minPlan: r.min_plan,
      availability: r.availability,
      catalogueVersion: r.catalogue_version,
      enabled: r.enabled,
    }));
}

/**
 * The catalogue with each capability's description and minimum plan, in the contract's order, as it stands for a
 * tenant on `plan` (the console's grant form).
 */
export async function capabilityCatalogue(knex: Knex, plan: string): Promise<CatalogueEntryView[]> {
  const rows: { id: string; description: string; enabled: boolean; min_plan: string; below: boolean }[] = await knex(
    'capabilities as c',
  )
    .join('plans as needed', 'needed.id', 'c.min_plan')
    .joinRaw('left join plans as held on held.id = ?', [plan])
    .select(
      'c.id',
      'c.description',
      'c.enabled',
      'c.min_plan',
      knex.raw('needed.level > coalesce(held.level, 0) as below'),
    );
  return rows
    .sort((a, b) => order(a.id) - order(b.id))
    .map((r) => ({
      id: r.id,
      description: r.description,
      enabled: r.enabled,
      minPlan: r.min_plan,
      belowPlan: !r.below ? null : RETAINED_DATA_CAPABILITIES.has(r.id as Capability) ? 'writes' : 'excluded',
    }));
}

/** Opens or closes a capability on this deployment (operator only): the next API request sees it. */
export async function setCapability(
  knex: Knex,
  capability: string,
  body: unknown,
  ifMatch?: string,
): Promise<Outcome<{ capability: string; enabled: boolean }>> {
  const parsed = validate(UpdateCapability, body);
  if (!parsed.ok) return parsed;
  const before = await knex('capabilities').where('id', capability).forNoKeyUpdate().first('enabled');
  if (!before) return refused('not_found');
  const stale = staleUnless(ifMatch, { capability, enabled: before.enabled });
  if (stale) return stale;
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
  const r = adminRoutes();
  r.get('/capabilities', async (_req, res) => reply(res, done({ items: await catalogue(knex) })));
  r.patch('/capabilities/:capability', async (req, res) =>
    replyTagged(res, await setCapability(knex, req.params.capability, req.body, ifMatchOf(req))),
  );
  return r;
}
