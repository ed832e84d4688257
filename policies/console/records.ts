// The console's read-only records of a tenant: decisions (filtered, paged, denials in words), usage, the audit trail
// (and its verification) and the exports.
import type { Request, Response, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, locals, one, type ConsoleKit } from './kit.js';
import { DENIAL_CHOICES, checkWords, denialFix, denialSentence } from './denials.js';
import { namerFor } from './names.js';
import { auditSentence, changeList, sinceOfDay, AUDIT_ACTION_CHOICES } from './audit-words.js';
import { html } from './html.js';
import { CAPABILITIES } from '../../wire/decision.js';
import { listClients } from '../admin/clients.js';
import { listExtensions } from '../admin/extensions.js';
import { adminKeyLabels } from '../admin/admin-keys.js';
import {
  answerKey,
  answeredStatuses,
  recentDecisions,
  usage,
  usagePerDay,
  type DecisionFilters,
} from '../admin/observability.js';
import { auditPage, verifyChain, type AuditVerification } from '../admin/audit-trail.js';
import { recordCount, streamExport } from '../admin/export.js';
import { streamTenantExport } from '../admin/tenant-export.js';

/** Decisions on one page of the console. */
const DECISIONS_SHOWN = 100;

export function recordRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, log, send, frameOf, refusedPage, permitted } = kit;
  tenant.get('/decisions', async (req, res) => {
    const { tenant: current } = locals(res);
    // An empty field is "any"; the rest are the admin API's filters, checked there.
    const filters: DecisionFilters = Object.fromEntries(
      (['requestId', 'clientId', 'outcome', 'code', 'capability'] as const).map((f) => [
        f,
        one(req.query[f])?.trim() || undefined,
      ]),
    );
    const [outcome, apps] = await Promise.all([
      recentDecisions(db, current.tenantId, {
        ...filters,
        limit: DECISIONS_SHOWN,
        cursor: one(req.query.cursor) || undefined,
      }),
      listClients(db, current.tenantId),
    ]);
    if (!outcome.ok)
      return refusedPage(res, outcome, { href: tenantPath(current.tenantId, 'decisions'), label: 'the decisions' });
    const shown = outcome.value.items;
    const [name, answered] = await Promise.all([
      namerFor(db, current.tenantId, apps, [...shown.map((d) => d.subject), ...shown.map((d) => d.clientId)]),
      answeredStatuses(
        db,
        current.tenantId,
        shown.filter((d) => d.allow),
      ),
    ]);
    const choices = {
      apps: apps.map((a) => ({ value: a.clientId, words: a.name })),
      denials: DENIAL_CHOICES,
      capabilities: CAPABILITIES,
    };
    const items = shown.map((d) => ({
      ...d,
      app: name(d.clientId) ?? d.clientId,
      who: name(d.subject) ?? d.subject,
      answered: d.allow ? answered.get(answerKey(d.clientId, d.requestId)) : undefined,
      check: checkWords(d.checkName),
      why: d.code ? { sentence: denialSentence(d.code), fix: denialFix(current.tenantId, d) } : undefined,
    }));
    send(
      res,
      pages.decisionsPage(
        { ...frameOf(res, 'Decisions'), tenant: current },
        { ...outcome.value, items },
        filters,
        choices,
      ),
    );
  });

  tenant.get('/usage', async (_req, res) => {
    const { tenantId } = locals(res).tenant;
    const [total, days, apps] = await Promise.all([
      usage(db, tenantId),
      usagePerDay(db, tenantId),
      listClients(db, tenantId),
    ]);
    if (!total.ok) return refusedPage(res, total);
    if (!days.ok) return refusedPage(res, days);
    send(res, pages.usagePage(frameOf(res, 'Usage'), total.value.total, days.value, apps));
  });

  const showAudit = async (req: Request, res: Response, verified?: AuditVerification) => {
    const { tenant: current, caller } = locals(res);
    // The date picker gives a day (UTC); the API's `since` is that day's start.
    const filters = {
      action: one(req.query.action)?.trim() || undefined,
      since: one(req.query.since)?.trim() || undefined,
    };
    const [outcome, apps, extensions] = await Promise.all([
      auditPage(db, current.tenantId, {
        action: filters.action,
        since: sinceOfDay(filters.since),
        cursor: one(req.query.cursor) || undefined,
        limit: 50,
      }),
      listClients(db, current.tenantId),
      listExtensions(db, current.tenantId),
    ]);
    const back = { href: tenantPath(current.tenantId, 'audit'), label: 'the audit trail' };
    if (!outcome.ok) return refusedPage(res, outcome, back);
    const shown = outcome.value.items;
    // Admin keys by the label given when they were made (kept in their create entries, which outlive revocation).
    const keyIds = [
      ...shown.flatMap((e) => (e.actor.keyId ? [e.actor.keyId] : [])),
      ...shown.filter((e) => e.target.type === 'admin_key').map((e) => e.target.id),
    ];
    const [name, labels] = await Promise.all([
      namerFor(
        db,
        current.tenantId,
        apps,
        shown.map((e) => e.target.id),
      ),
      adminKeyLabels(db, current.tenantId, keyIds),
    ]);
    const keyNamed = (keyId: string) => {
      const label = labels.get(keyId);
      return label ? html`${label} <small><code>${keyId}</code></small>` : html`<code>${keyId}</code>`;
    };
    const extensionNames = new Map(extensions.map((x) => [x.extensionId, x.name]));
    // A target as the lists name it; the tenant by its display name; what nothing names (a deleted app) by its id.
    const targetOf = (e: (typeof shown)[number]) => {
      const { type, id } = e.target;
      const kind = name.kind(id);
      if (type === 'admin_key') return { words: keyNamed(id) };
      const words =
        type === 'tenant' && id === current.tenantId
          ? current.displayName
          : type === 'extension'
            ? extensionNames.get(id)
            : name(id);
      return {
        words: words === undefined ? html`<code>${id}</code>` : html`${words}`,
        kind: kind === 'person' || kind === 'service_account' ? kind : undefined,
      };
    };
    const items = shown.map((e) => ({
      ...e,
      sentence: auditSentence(e.action, targetOf(e)),
      changeList: changeList(e.changes),
      by: e.actor.kind === 'operator' ? html`the operator` : html`admin key ${keyNamed(e.actor.keyId ?? '')}`,
    }));
    const scope = caller.kind === 'operator' ? 'chain' : 'tenant';
    send(
      res,
      pages.auditPage(
        { ...frameOf(res, 'Audit'), tenant: current },
        { ...outcome.value, items },
        filters,
        AUDIT_ACTION_CHOICES,
        scope,
        verified,
      ),
    );
  };

  tenant.get('/audit', (req, res) => showAudit(req, res));

  // The operator checks the whole chain (GET /audit/verify), a tenant admin its tenant's entries
  // (GET /tenants/{tenantId}/audit/verify): the same answers as the admin API and the CLI.
  tenant.get('/audit/verify', async (req, res) => {
    const { tenant: current, caller } = locals(res);
    const whole = caller.kind === 'operator';
    const path = whole ? apiPath('audit', 'verify') : apiPath('tenants', current.tenantId, 'audit', 'verify');
    if (!(await permitted(res, { method: 'GET', path }))) return;
    const verified = await verifyChain(db, whole ? null : current.tenantId);
    if (!verified.ok) return refusedPage(res, verified);
    await showAudit(req, res, verified.value);
  });

  tenant.get('/export', async (_req, res) => {
    const { tenant: current } = locals(res);
    const [extensions, records] = await Promise.all([
      listExtensions(db, current.tenantId),
      recordCount(db, current.tenantId),
    ]);
    send(res, pages.exportPage({ ...frameOf(res, 'Export'), tenant: current }, extensions, records));
  });

  const exportBack = (tenantId: string) => ({ href: tenantPath(tenantId, 'export'), label: 'the export page' });

  tenant.get('/export/download', async (req, res) => {
    const { tenant: current } = locals(res);
    const extensionId = one(req.query.extensionId) || undefined;
    await streamExport(db, log, req, res, {
      tenantId: current.tenantId,
      query: extensionId ? { extensionId } : {},
      refuse: (refusal) => refusedPage(res, refusal, exportBack(current.tenantId)),
      attachment: `${current.label}-records.ndjson`,
    });
  });

  tenant.get('/export/tenant', async (req, res) => {
    const { tenant: current } = locals(res);
    await streamTenantExport(db, log, req, res, {
      tenantId: current.tenantId,
      query: {},
      refuse: (refusal) => refusedPage(res, refusal, exportBack(current.tenantId)),
      attachment: `${current.label}-tenant.ndjson`,
    });
  });
}
