import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { newId, isId } from '../../common/ids.js';
import { adminRoutes, DISPLAY_NAME, LABEL, PLAN, idPages, reply, unlessTaken, validate, type Page } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { fieldChanges, recordChange, recordNoChange } from './audit.js';
import type { AdminCaller } from './authority.js';
import { DEFAULT_RATE_LIMIT } from '../evaluate.js';
import { RateLimitPolicySchema, type RateLimitPolicy } from '../../wire/decision.js';
import { ifMatchOf, replyTagged, staleUnless } from './etags.js';

const CreateTenant = z.strictObject({ label: LABEL, displayName: DISPLAY_NAME, plan: PLAN });
const UpdateTenant = z.strictObject({
  displayName: DISPLAY_NAME.optional(),
  plan: PLAN.optional(),
  status: z.enum(['active', 'suspended']).optional(),
  rateLimit: RateLimitPolicySchema.optional(),
});

interface TenantRow {
  id: string;
  label: string;
  display_name: string;
  plan: string;
  status: string;
  rate_limit: unknown;
}
const view = (t: TenantRow) => ({
  tenantId: t.id,
  label: t.label,
  displayName: t.display_name,
  plan: t.plan,
  status: t.status,
  ...(t.rate_limit ? { rateLimit: t.rate_limit } : {}),
});

export type TenantView = ReturnType<typeof view>;

export async function listTenants(knex: Knex): Promise<TenantView[]> {
  return (await knex('tenants').orderBy('label')).map(view);
}

const tenantPages = idPages('ten');
const TenantQuery = tenantPages.query({ status: z.enum(['active', 'suspended']).optional(), plan: PLAN.optional() });

/** A page of tenants in creation order (ids are ULIDs), optionally of one status or plan (operator only). */
async function tenantPage(knex: Knex, query: unknown): Promise<Page<TenantView>> {
  const parsed = validate(TenantQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, cursor, status, plan } = parsed.value;
  const rows: TenantRow[] = await knex('tenants')
    .modify((q) => {
      if (cursor) q.where('id', '>', cursor);
      if (status) q.where({ status });
      if (plan) q.where({ plan });
    })
    .orderBy('id')
    .limit(limit + 1);
  const { items, nextCursor } = tenantPages.page(rows, limit, (t) => t.id);
  return done({ items: items.map(view), nextCursor });
}

export async function findTenant(knex: Knex, tenantId: string): Promise<TenantView | undefined> {
  const row = isId('ten', tenantId) ? await knex('tenants').where({ id: tenantId }).first() : undefined;
  return row && view(row);
}

/** One entry per change; its action names the weightiest field changed (a suspension outranks a rename). */
function tenantAction(changed: Record<string, { from: unknown; to: unknown }>): string {
  if (changed.status) return changed.status.to === 'suspended' ? 'tenant.suspend' : 'tenant.activate';
  if (changed.plan) return 'tenant.plan_change';
  if (changed.rateLimit) return 'tenant.limits_change';
  return 'tenant.rename';
}

/**
 * The first window of `limits` beyond the plan's ceiling, named; a window is within it when it neither allows a larger
 * burst (points) nor a faster average rate (points per second) than the ceiling's window of the same layer.
 */
function beyondCeiling(limits: RateLimitPolicy, ceiling: RateLimitPolicy): string | undefined {
  for (const layer of ['tenant', 'account'] as const) {
    const w = limits[layer];
    const c = ceiling[layer];
    if (w.points > c.points || w.points * c.durationS > c.points * w.durationS)
      return (
        `rateLimit.${layer} is beyond the plan's ceiling of ${c.points} per ${c.durationS} s; ` +
        'ask the operator for more'
      );
  }
  return undefined;
}

/** The highest limits a tenant admin key may give a tenant on `plan` (the operator is not held to them). */
export async function rateLimitCeiling(knex: Knex, plan: string): Promise<RateLimitPolicy> {
  const row = await knex('plans').where({ id: plan }).first('rate_limit_ceiling');
  return row?.rate_limit_ceiling ?? DEFAULT_RATE_LIMIT;
}

/** Creates a tenant (operator only): active, with the plan's default limits until they are set. */
export async function createTenant(knex: Knex, body: unknown): Promise<Outcome<TenantView>> {
  const parsed = validate(CreateTenant, body);
  if (!parsed.ok) return parsed;
  const b = parsed.value;
  return unlessTaken('tenant label is taken', async () => {
    // Its own (sub)transaction: a taken label then rolls back only this insert, not the request's audited transaction.
    const [row] = await knex.transaction((trx) =>
      trx('tenants')
        .insert({ id: newId('ten'), label: b.label, display_name: b.displayName, plan: b.plan })
        .returning('*'),
    );
    const created = view(row);
    await recordChange({
      action: 'tenant.create',
      target: { type: 'tenant', id: created.tenantId },
      tenantId: created.tenantId,
      changes: fieldChanges(undefined, created, ['label', 'displayName', 'plan', 'status']),
    });
    return done(created);
  });
}

/**
 * Changes a tenant's name, plan, status or limits (plan and status: operator only, by the authority table). A tenant
 * key sets its own limits only up to its plan's ceiling: they protect capacity every tenant shares.
 */
export async function updateTenant(
  knex: Knex,
  tenantId: string,
  body: unknown,
  caller: AdminCaller,
  ifMatch?: string,
): Promise<Outcome<TenantView>> {
  const parsed = validate(UpdateTenant, body);
  if (!parsed.ok) return parsed;
  const b = parsed.value;
  const changes = {
    ...(b.displayName !== undefined && { display_name: b.displayName }),
    ...(b.plan !== undefined && { plan: b.plan }),
    ...(b.status !== undefined && { status: b.status }),
    ...(b.rateLimit !== undefined && { rate_limit: JSON.stringify(b.rateLimit) }),
  };
  const before = isId('ten', tenantId)
    ? await knex('tenants').where({ id: tenantId }).forNoKeyUpdate().first()
    : undefined;
  if (!before) return refused('not_found');
  const stale = staleUnless(ifMatch, view(before));
  if (stale) return stale;
  if (b.rateLimit && caller.kind === 'tenant') {
    const beyond = beyondCeiling(b.rateLimit, await rateLimitCeiling(knex, before.plan));
    if (beyond) return refused('forbidden', beyond);
  }
  const [row] = Object.keys(changes).length
    ? await knex('tenants').where({ id: tenantId }).update(changes).returning('*')
    : [before];
  const after = view(row);
  const changed = fieldChanges(view(before), after, ['displayName', 'plan', 'status', 'rateLimit']);
  if (Object.keys(changed).length)
    await recordChange({
      action: tenantAction(changed),
      target: { type: 'tenant', id: tenantId },
      tenantId,
      changes: changed,
    });
  else recordNoChange();
  return done(after);
}

export function tenantsRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.get('/tenants', async (req, res) => reply(res, await tenantPage(knex, req.query)));
  r.post('/tenants', async (req, res) => reply(res, await createTenant(knex, req.body), 201));
  r.get('/tenants/:tenantId', async (req, res) => {
    const tenant = await findTenant(knex, req.params.tenantId);
    replyTagged(res, tenant ? done(tenant) : refused('not_found'));
  });
  r.patch('/tenants/:tenantId', async (req, res) =>
    replyTagged(
      res,
      await updateTenant(knex, req.params.tenantId, req.body, res.locals.adminCaller as AdminCaller, ifMatchOf(req)),
    ),
  );
  return r;
}
