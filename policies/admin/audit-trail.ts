// Reading the audit trail: a tenant's entries, all entries (operator), and the chain check. Newest first, cursor pages.
import type { Router, Response } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { isId } from '../../common/ids.js';
import { chainHash, entryView, GENESIS, type AuditEntryView, type AuditRow } from './audit.js';
import { adminRoutes, reply, tenantExists, validate } from './support.js';
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
  // RFC 3339 §5.6 allows a lower-case `t` and `z`; the ISO check takes the upper-case form only.
  since: z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(z.iso.datetime({ offset: true }))
    .optional(),
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

export type AuditVerification = { ok: true; entries: number } | { ok: false; entries: number; brokenAt: string };

/**
 * Walks the chain in id order, or only `tenantId`'s entries; the first entry whose hash does not follow from its
 * predecessor's (the entry stored just before it, whichever tenant's) and its own content is reported. Each entry is
 * checked against the predecessor as stored, so an edited entry, and one whose predecessor was removed, both fail.
 */
export async function verifyChain(knex: Knex, tenantId: string | null): Promise<Outcome<AuditVerification>> {
  if (tenantId !== null && !(await tenantExists(knex, tenantId))) return refused('not_found');
  let after = '0';
  let entries = 0;
  for (;;) {
    const rows: (AuditRow & { previous_hash: string | null })[] = await knex('admin_audit as a')
      .where('a.id', '>', after)
      .modify((q) => void (tenantId !== null && q.where('a.tenant_id', tenantId)))
      .orderBy('a.id')
      .limit(VERIFY_PAGE)
      .select(
        'a.*',
        knex.raw('(select p.hash from admin_audit p where p.id < a.id order by p.id desc limit 1) as previous_hash'),
      );
    for (const { previous_hash, hash, ...content } of rows) {
      entries++;
      if (chainHash(previous_hash ?? GENESIS, content) !== hash)
        return done({ ok: false, entries, brokenAt: String(content.id) });
    }
    if (rows.length < VERIFY_PAGE) return done({ ok: true, entries });
    after = String(rows.at(-1)!.id);
  }
}

/** `verified` counts each chain check by its result (the audit_chain_verifications_total metric). */
export function auditTrailRouter(knex: Knex, verified: (result: 'ok' | 'broken') => void): Router {
  const r = adminRoutes();
  r.get('/tenants/:tenantId/audit', async (req, res) =>
    reply(res, await auditPage(knex, String(req.params.tenantId), req.query)),
  );
  /** Answers a chain check (the whole chain, or one tenant's entries) and counts its result. */
  const verify = async (res: Response, tenantId: string | null) => {
    const outcome = await verifyChain(knex, tenantId);
    if (outcome.ok) verified(outcome.value.ok ? 'ok' : 'broken');
    reply(res, outcome);
  };
  r.get('/tenants/:tenantId/audit/verify', (req, res) => verify(res, String(req.params.tenantId)));
  r.get('/audit', async (req, res) => reply(res, await auditPage(knex, null, req.query)));
  r.get('/audit/verify', (_req, res) => verify(res, null));
  return r;
}
