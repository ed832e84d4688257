// What a tenant's admins can see after the fact: recent PDP decisions (why a request was denied) and metered calls.
import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { isId } from '../../common/ids.js';
import { adminRoutes, idPages, reply, parseForTenant, type Page } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { DENY_CODES } from '../../wire/codes.js';
import { CAPABILITIES } from '../../wire/decision.js';

const decisionPages = idPages('decision');
const DecisionQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(50),
  /** Only the decision(s) of this request id. */
  requestId: z.string().min(1).max(128).optional(),
  /** Older than the last decision of the previous page (its `nextCursor`); decision ids are row numbers. */
  cursor: decisionPages.cursor.refine((id) => /^\d{1,18}$/.test(id), 'not a cursor of this list').optional(),
  clientId: z.string().min(1).max(200).optional(),
  outcome: z.enum(['allow', 'deny']).optional(),
  code: z.enum(DENY_CODES).optional(),
  capability: z.enum(CAPABILITIES).optional(),
});
export type DecisionFilters = Partial<Record<'requestId' | 'clientId' | 'outcome' | 'code' | 'capability', string>>;
const USAGE_ITEMS = 100;
const USAGE_DAYS = 30;

const iso = (d: Date | string) => new Date(d).toISOString();
const tenantExists = async (knex: Knex, id: string) =>
  isId('ten', id) && Boolean(await knex('tenants').where({ id }).first('id'));

export interface DecisionView {
  requestId: string;
  tenantId: string;
  clientId: string;
  subject: string;
  capability: string;
  allow: boolean;
  code: string | null;
  checkName: string;
  createdAt: string;
}

/**
 * The tenant's decisions, newest first (by row id: several share a millisecond), optionally of one request, app,
 * outcome, deny code or capability, a page at a time.
 */
export async function recentDecisions(knex: Knex, tenantId: string, query: unknown): Promise<Page<DecisionView>> {
  const parsed = await parseForTenant(knex, tenantId, DecisionQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, requestId, cursor, clientId, outcome, code, capability } = parsed.value;
  const rows: Record<string, any>[] = await knex('decision_logs')
    .where('tenant_id', tenantId)
    .modify((q) => {
      if (requestId !== undefined) q.where('request_id', requestId);
      if (cursor !== undefined) q.where('id', '<', cursor);
      if (clientId !== undefined) q.where('client_id', clientId);
      if (outcome !== undefined) q.where('allow', outcome === 'allow');
      if (code !== undefined) q.where('code', code);
      if (capability !== undefined) q.where('capability', capability);
    })
    .orderBy('id', 'desc')
    .limit(limit + 1);
  const { items, nextCursor } = decisionPages.page(rows, limit, (d) => String(d.id));
  return done({
    nextCursor,
    items: items.map((d) => ({
      requestId: d.request_id,
      tenantId: d.tenant_id,
      clientId: d.client_id,
      subject: d.subject,
      capability: d.capability,
      allow: d.allow,
      code: d.code,
      checkName: d.check_name,
      createdAt: iso(d.created_at),
    })),
  });
}

/** Where the API's answer to an app's request is kept: the app and the request id (callers choose request ids). */
export const answerKey = (clientId: string, requestId: string) => `${clientId} ${requestId}`;

/**
 * The status the API answered each of `decisions` with, from its metered call (answerKey to status; the latest when
 * an id was used again): an allowed request may still be refused by the backend (428, 422, 404...). Served by the
 * index on (tenant, request id) of migration 016.
 */
export async function answeredStatuses(
  knex: Knex,
  tenantId: string,
  decisions: readonly Pick<DecisionView, 'clientId' | 'requestId'>[],
): Promise<Map<string, number>> {
  if (decisions.length === 0) return new Map();
  const rows: { client_id: string; request_id: string; status: number }[] = await knex('usage_records')
    .where('tenant_id', tenantId)
    .whereIn(
      'request_id',
      decisions.map((d) => d.requestId),
    )
    .distinctOn('client_id', 'request_id')
    .orderBy([{ column: 'client_id' }, { column: 'request_id' }, { column: 'created_at', order: 'desc' }])
    .select('client_id', 'request_id', 'status');
  return new Map(rows.map((r) => [answerKey(r.client_id, r.request_id), r.status]));
}

/** Metered calls: the total and the latest ones. */
export async function usage(knex: Knex, tenantId: string) {
  if (!(await tenantExists(knex, tenantId))) return refused('not_found');
  // One row per metered call (gateway/plugins/metering/usage-meter.ts decides which repeats are retries).
  const counted = await knex('usage_records').where('tenant_id', tenantId).count({ total: '*' }).first();
  const rows = await knex('usage_records')
    .where('tenant_id', tenantId)
    .orderBy('created_at', 'desc')
    .limit(USAGE_ITEMS);
  return done({
    tenantId,
    total: Number(counted?.total ?? 0),
    items: rows.map((u) => ({
      requestId: u.request_id,
      clientId: u.client_id,
      accountId: u.account_id,
      operationId: u.operation_id,
      status: u.status,
      createdAt: iso(u.created_at),
    })),
  });
}

export interface DailyUsage {
  day: string;
  clientId: string;
  calls: number;
}

/** Metered calls per UTC day and client over the last 30 days, newest day first. */
export async function usagePerDay(knex: Knex, tenantId: string): Promise<Outcome<DailyUsage[]>> {
  if (!(await tenantExists(knex, tenantId))) return refused('not_found');
  const day = knex.raw(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`);
  const rows = (await knex('usage_records')
    .where('tenant_id', tenantId)
    .where('created_at', '>=', knex.raw(`now() - interval '${USAGE_DAYS} days'`))
    .select({ day, clientId: 'client_id' })
    .count({ calls: '*' })
    .groupByRaw('1, 2')
    .orderByRaw('1 desc, 2')) as unknown as { day: string; clientId: string; calls: string | number }[];
  return done(rows.map((r) => ({ day: String(r.day), clientId: String(r.clientId), calls: Number(r.calls) })));
}

export function observabilityRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.get('/tenants/:tenantId/decisions', async (req, res) =>
    reply(res, await recentDecisions(knex, req.params.tenantId, req.query)),
  );
  r.get('/tenants/:tenantId/usage', async (req, res) => reply(res, await usage(knex, req.params.tenantId)));
  return r;
}
