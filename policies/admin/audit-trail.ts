// Reading the audit trail: a tenant's entries, all entries (operator), and the chain check. Newest first, cursor pages.
import { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { isId } from '../../common/ids.js';
import { chainHash, entryView, GENESIS, type AuditEntryView, type AuditRow } from './audit.js';
import { reply, validate } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';

/** The cursor is the last entry's id, opaque to clients. */
const encodeCursor = (id: string) => Buffer.from(`a:${id}`).toString('base64url');
const decodeCursor = (cursor: string) => /^a:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))?.[1];

const AuditQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z
    .string()
    .max(64)
    .refine((c) => decodeCursor(c) !== undefined, 'not a cursor from this trail')
    .optional(),
  action: z
    .string()
    .regex(/^[a-z_]+\.[a-z_]+$/)
    .max(64)
    .optional(),
  since: z.iso.datetime({ offset: true }).optional(),
});

export interface AuditPage {
  items: AuditEntryView[];
  nextCursor: string | null;
}

/** A page of entries, newest first; `tenantId` null reads every tenant's and the platform's own. */
export async function auditPage(knex: Knex, tenantId: string | null, query: unknown): Promise<Outcome<AuditPage>> {
  const parsed = validate(AuditQuery, query);
  if (!parsed.ok) return parsed;
  if (tenantId !== null && (!isId('ten', tenantId) || !(await knex('tenants').where({ id: tenantId }).first('id'))))
    return refused('not_found');
  const { limit, cursor, action, since } = parsed.value;
  const rows: AuditRow[] = await knex('admin_audit')
    .modify((q) => {
      if (tenantId !== null) q.where('tenant_id', tenantId);
      if (cursor) q.where('id', '<', decodeCursor(cursor)!);
      if (action) q.where('action', action);
      if (since) q.where('at', '>=', new Date(since));
    })
    .orderBy('id', 'desc')
    .limit(limit + 1);
  const items = rows.slice(0, limit).map(entryView);
  return done({ items, nextCursor: rows.length > limit ? encodeCursor(items.at(-1)!.id) : null });
}

const VERIFY_PAGE = 1000;

/** Walks the whole chain in id order; the first entry whose hash does not follow from its predecessor is reported. */
async function verifyChain(
  knex: Knex,
): Promise<{ ok: true; entries: number } | { ok: false; entries: number; brokenAt: string }> {
  let previous = GENESIS;
  let after = '0';
  let entries = 0;
  for (;;) {
    const rows: AuditRow[] = await knex('admin_audit').where('id', '>', after).orderBy('id').limit(VERIFY_PAGE);
    for (const row of rows) {
      entries++;
      const { hash, ...content } = row;
      if (chainHash(previous, content) !== hash) return { ok: false, entries, brokenAt: String(row.id) };
      previous = hash;
    }
    if (rows.length < VERIFY_PAGE) return { ok: true, entries };
    after = String(rows.at(-1)!.id);
  }
}

/** `verified` counts each chain check by its result (the audit_chain_verifications_total metric). */
export function auditTrailRouter(knex: Knex, verified: (result: 'ok' | 'broken') => void): Router {
  const r = Router();
  r.get('/tenants/:tenantId/audit', async (req, res) =>
    reply(res, await auditPage(knex, String(req.params.tenantId), req.query)),
  );
  r.get('/audit', async (req, res) => reply(res, await auditPage(knex, null, req.query)));
  r.get('/audit/verify', async (_req, res) => {
    const check = await verifyChain(knex);
    verified(check.ok ? 'ok' : 'broken');
    res.json(check);
  });
  return r;
}
