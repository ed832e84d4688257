// The whole tenant as one NDJSON file (GET /admin/v1/tenants/{tenantId}/export/tenant): the tenant, its persons with
// the relationship, its apps (never a secret or its hash), grants, service accounts, extensions with their schema
// versions, records and audit entries, each line with a `type`, in that order, all from one snapshot and streamed in
// constant memory by the records export's machinery (export.ts). Never a password hash, secret or admin key.
import type { Router, Request, Response } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { sendRefusal } from '../../common/http.js';
import { recordSource, streamLines, iso, type ExportLog, type LineSource } from './export.js';
import { adminRoutes, tenantExists, validate } from './support.js';
import { refused, type Refusal } from '../../wire/outcome.js';

/** The line types, in the order the file holds them. */
export const TENANT_EXPORT_TYPES = [
  'tenant',
  'person',
  'app',
  'grant',
  'service_account',
  'extension',
  'record',
  'audit_entry',
] as const;

const object = (type: (typeof TENANT_EXPORT_TYPES)[number], fields: string) =>
  `json_build_object('type', '${type}', ${fields})::text`;

/** Every line source of the tenant's export, in TENANT_EXPORT_TYPES order. */
function tenantSources(tenantId: string): LineSource[] {
  return [
    {
      rows: (db) => db('tenants as t').where('t.id', tenantId),
      keys: ['t.id'],
      line: object(
        'tenant',
        `'tenantId', t.id, 'label', t.label, 'displayName', t.display_name, 'plan', t.plan, 'status', t.status,
        'rateLimit', t.rate_limit, 'createdAt', ${iso('t.created_at')}`,
      ),
    },
    {
      rows: (db) =>
        db('tenant_person_relationships as r')
          .join('persons as p', 'p.id', 'r.person_id')
          .leftJoin('accounts as a', (j) =>
            j.on('a.person_id', 'p.id').andOn('a.tenant_id', 'r.tenant_id').andOnVal('a.kind', 'person'),
          )
          .where('r.tenant_id', tenantId),
      keys: ['p.id'],
      line: object(
        'person',
        `'personId', p.id, 'displayName', p.display_name, 'createdAt', ${iso('p.created_at')},
        'accountId', a.id, 'username', a.username, 'loginStatus', a.status,
        'relationship', json_build_object('status', case when r.ended_at is null then 'active' else 'ended' end,
          'since', ${iso('r.created_at')}, 'endedAt', ${iso('r.ended_at')})`,
      ),
    },
    {
      rows: (db) => db('clients as c').where('c.tenant_id', tenantId),
      keys: ['c.id'],
      line: object(
        'app',
        `'clientId', c.id, 'name', c.name, 'kind', c.kind, 'clientType', c.type, 'status', c.status,
        'redirectUris', c.redirect_uris, 'allowedOrigins', c.allowed_origins, 'createdAt', ${iso('c.created_at')}`,
      ),
    },
    {
      rows: (db) => db('tenant_grants as g').where('g.tenant_id', tenantId).groupBy('g.client_id'),
      keys: ['g.client_id'],
      line: object(
        'grant',
        `'clientId', g.client_id, 'capabilities', json_agg(g.capability_id order by g.capability_id)`,
      ),
    },
    {
      rows: (db) => db('accounts as a').where({ 'a.tenant_id': tenantId, 'a.kind': 'service' }),
      keys: ['a.id'],
      line: object(
        'service_account',
        `'accountId', a.id, 'clientId', a.client_id, 'name', a.name, 'status', a.status, 'epoch', a.epoch,
        'capabilities', coalesce((select json_agg(c.capability_id order by c.capability_id)
          from service_account_capabilities c where c.account_id = a.id), '[]'::json),
        'createdAt', ${iso('a.created_at')}`,
      ),
    },
    {
      rows: (db) => db('extensions as e').where('e.tenant_id', tenantId),
      keys: ['e.id'],
      line: object(
        'extension',
        `'extensionId', e.id, 'clientId', e.client_id, 'name', e.name, 'createdAt', ${iso('e.created_at')},
        'schemaVersions', coalesce((select json_agg(json_build_object('version', s.version, 'schema', s.schema)
          order by s.version) from extension_schemas s where s.extension_id = e.id), '[]'::json)`,
      ),
    },
    recordSource(tenantId, {}, true),
    {
      rows: (db) => db('admin_audit as x').where('x.tenant_id', tenantId),
      keys: ['x.id'],
      line: object(
        'audit_entry',
        `'id', x.id::text, 'at', ${iso('x.at')}, 'tenantId', x.tenant_id,
        'actor', case when x.actor_kind = 'operator' then json_build_object('kind', x.actor_kind)
          else json_build_object('kind', x.actor_kind, 'keyId', x.actor_key_id) end,
        'action', x.action, 'target', json_build_object('type', x.target_type, 'id', x.target_id),
        'changes', x.changes, 'requestId', x.request_id, 'ip', x.ip, 'hash', x.hash`,
      ),
    },
  ];
}

/** The whole-tenant export takes no query parameters. */
const TenantExportQuery = z.strictObject({});

export interface TenantExportRequest {
  tenantId: string;
  query: unknown;
  /** Answers a refused export (unknown tenant, a query): a Problem in the API, a page in the console. */
  refuse(refusal: Refusal): void;
  /** Offer the stream as a file download with this name (the console). */
  attachment?: string;
}

/** Streams the tenant's whole export as the answer to `req`: every line, or a Problem/cut stream on failure. */
export async function streamTenantExport(
  knex: Knex,
  log: ExportLog,
  req: Request,
  res: Response,
  ask: TenantExportRequest,
): Promise<void> {
  const parsed = validate(TenantExportQuery, ask.query);
  if (!parsed.ok) return ask.refuse(parsed);
  if (!(await tenantExists(knex, ask.tenantId))) return ask.refuse(refused('not_found'));
  await streamLines(knex, log, req, res, { ...ask, sources: tenantSources(ask.tenantId) });
}

export function tenantExportRouter(knex: Knex, log: ExportLog): Router {
  const r = adminRoutes();
  r.get('/tenants/:tenantId/export/tenant', (req, res) =>
    streamTenantExport(knex, log, req, res, {
      tenantId: String(req.params.tenantId),
      query: req.query,
      refuse: (refusal) => sendRefusal(res, refusal),
    }),
  );
  return r;
}
