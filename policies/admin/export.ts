// A tenant's extension records as NDJSON (platform-interfaces.md "Export"): the data an app stored is never held
// hostage, whatever the plan or quota. One REPEATABLE READ, read-only transaction gives every page the same snapshot;
// keyset pages of PAGE_SIZE rows keep memory constant, and each page waits for the reader to take the last one
// (backpressure), so a slow reader holds one page, not the table. The same streaming carries the whole-tenant export
// (tenant-export.ts), one source of lines after another.
import { once, type EventEmitter } from 'node:events';
import { createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import type { Router, Request, Response } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { EXTENSION_ID, isId } from '../../common/ids.js';
import { sendProblem, sendRefusal } from '../../common/http.js';
import { adminRoutes, validate } from './support.js';
import { done, refused, type Outcome, type Refusal } from '../../wire/outcome.js';

const EXPORT_CONTENT_TYPE = 'application/x-ndjson';
const PAGE_SIZE = 1000;
/**
 * What a failed export writes last before it aborts the response: the start of a record that never ends, so the last
 * line of a saved file is not valid JSON and nobody mistakes a cut export for a whole one.
 */
export const INCOMPLETE_MARK = '{"incomplete":';

const ExportQuery = z.strictObject({
  extensionId: z.string().regex(EXTENSION_ID).optional(),
  clientId: z.string().min(1).max(200).optional(),
});
export type ExportFilter = z.output<typeof ExportQuery>;

/** A timestamp column as the API writes it (ISO 8601, ms, UTC), in SQL. */
export const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** One record's fields, built by PostgreSQL: the API's field names and timestamp format. */
const RECORD_FIELDS = `'personId', pe.person_id, 'extensionId', pe.extension_id, 'clientId', e.client_id,
  'schemaVersion', pe.schema_version, 'data', pe.data, 'etag', pe.etag, 'createdAt', ${iso('pe.created_at')},
  'updatedAt', ${iso('pe.updated_at')}, 'updatedBy', pe.updated_by`;

/**
 * Lines an export reads in keyset pages: `rows` the matching rows, `keys` the columns that order them uniquely,
 * `line` the SQL expression of a row's line (JSON text).
 */
export interface LineSource {
  rows(db: Knex): Knex.QueryBuilder;
  keys: string[];
  line: string;
}

/** A tenant's records, one line each; `typed` starts each with `"type":"record"` (the whole-tenant export). */
export const recordSource = (tenantId: string, filter: ExportFilter, typed = false): LineSource => ({
  rows: (db) =>
    db('person_extensions as pe')
      .join('extensions as e', 'e.id', 'pe.extension_id')
      .where('pe.tenant_id', tenantId)
      .modify((q) => {
        if (filter.extensionId) q.andWhere('pe.extension_id', filter.extensionId);
        if (filter.clientId) q.andWhere('e.client_id', filter.clientId);
      }),
  keys: ['pe.person_id', 'pe.extension_id'],
  line: `json_build_object(${typed ? "'type', 'record', " : ''}${RECORD_FIELDS})::text`,
});

/** Checks the tenant and the filters: an unknown tenant is 404, a filter naming nothing of this tenant 422. */
async function exportPlan(knex: Knex, tenantId: string, query: unknown): Promise<Outcome<ExportFilter>> {
  const parsed = validate(ExportQuery, query);
  if (!parsed.ok) return parsed;
  if (!isId('ten', tenantId) || !(await knex('tenants').where({ id: tenantId }).first('id')))
    return refused('not_found');
  const { extensionId, clientId } = parsed.value;
  if (extensionId && !(await knex('extensions').where({ id: extensionId, tenant_id: tenantId }).first('id')))
    return refused('schema_invalid', 'extensionId: no such extension in this tenant');
  if (clientId && !(await knex('clients').where({ id: clientId, tenant_id: tenantId }).first('id')))
    return refused('schema_invalid', 'clientId: no such client in this tenant');
  return done(parsed.value);
}

/** How many records a (records) export of the tenant would hold now, for the console to say before a download. */
export async function recordCount(knex: Knex, tenantId: string, filter: ExportFilter = {}): Promise<number> {
  const [counted] = await recordSource(tenantId, filter).rows(knex).count({ records: '*' });
  return Number(counted?.records ?? 0);
}

export interface ExportProgress {
  /** Lines handed to the output so far. */
  lines: number;
}

/** Resolves when `out` wants more, or when `until` (the response) closes; leaves no listener behind. */
function drained(out: Writable, until: EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      until.off('close', done);
      resolve();
    };
    out.on('drain', done);
    until.on('close', done);
  });
}

/** How long the export's snapshot may wait for its reader between pages. */
const EXPORT_IDLE_MS = 5 * 60 * 1000;

/**
 * Writes every line of each source in turn to `out`, from one snapshot. Stops early (and releases its connection)
 * when `stopped()` turns true, checked before each page and after waiting for the reader, who is waited for until
 * `until` closes.
 */
async function writeLines(
  knex: Knex,
  sources: LineSource[],
  out: Writable,
  until: EventEmitter,
  stopped: () => boolean,
  progress: ExportProgress,
): Promise<void> {
  await knex.transaction(
    async (trx) => {
      // The snapshot waits, idle, while a slow reader drains a page: longer than a request's transaction may
      // (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS), and it holds no locks. A reader gone away ends it at once.
      await trx.raw(`set local idle_in_transaction_session_timeout = ${EXPORT_IDLE_MS}`);
      for (const source of sources) {
        let after: unknown[] | undefined;
        const keyList = source.keys.join(', ');
        while (!stopped()) {
          const rows: Record<string, unknown>[] = await source
            .rows(trx)
            .modify((q) => {
              if (after) q.andWhereRaw(`(${keyList}) > (${after.map(() => '?').join(', ')})`, after as Knex.Value[]);
            })
            .orderBy(source.keys.map((column) => ({ column })))
            .limit(PAGE_SIZE)
            .select(trx.raw(`${source.line} as line`), ...source.keys.map((k, i) => `${k} as key${i}`));
          if (rows.length === 0) break;
          const last = rows[rows.length - 1]!;
          after = source.keys.map((_, i) => last[`key${i}`]);
          progress.lines += rows.length;
          const room = out.write(rows.map((r) => `${r.line}\n`).join(''));
          if (rows.length < PAGE_SIZE) break;
          if (!room && !stopped()) await drained(out, until);
        }
      }
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** Where the lines go: the response itself, or a gzip stream into it that never ends the response on its own. */
function bodyOf(res: Response, gzip: boolean): { out: Writable; finish(last?: string): Promise<void> } {
  if (!gzip) return { out: res, finish: (last = '') => new Promise((resolve) => res.write(last, () => resolve())) };
  const zipped = createGzip();
  zipped.pipe(res, { end: false });
  return {
    out: zipped,
    async finish(last = '') {
      zipped.end(last);
      await once(zipped, 'end');
      await new Promise<void>((resolve) => res.write('', () => resolve()));
    },
  };
}

export interface ExportRequest {
  tenantId: string;
  query: unknown;
  /** Answers a refused export (bad filter, unknown tenant): a Problem in the API, a page in the console. */
  refuse(refusal: Refusal): void;
  /** Offer the stream as a file download with this name (the console). */
  attachment?: string;
}

/** Streams a tenant's records export as the answer to `req`: checks, then every line, or a Problem/cut stream. */
export async function streamExport(
  knex: Knex,
  log: ExportLog,
  req: Request,
  res: Response,
  ask: ExportRequest,
): Promise<void> {
  const plan = await exportPlan(knex, ask.tenantId, ask.query);
  if (!plan.ok) return ask.refuse(plan);
  await streamLines(knex, log, req, res, { ...ask, sources: [recordSource(ask.tenantId, plan.value)] });
}

/** Streams the lines of `sources` from one snapshot as NDJSON: every line, or a Problem/cut stream on failure. */
export async function streamLines(
  knex: Knex,
  log: ExportLog,
  req: Request,
  res: Response,
  ask: { tenantId: string; sources: LineSource[]; attachment?: string | undefined },
): Promise<void> {
  const { tenantId } = ask;
  let stopped = false;
  // A client that goes away ends the export at once: the transaction ends and its connection returns to the pool.
  res.on('close', () => void (stopped = true));
  const gzip = req.acceptsEncodings('gzip', 'identity') === 'gzip';
  res.status(200).type(EXPORT_CONTENT_TYPE).setHeader('cache-control', 'no-store');
  res.setHeader('vary', 'accept-encoding');
  if (gzip) res.setHeader('content-encoding', 'gzip');
  if (ask.attachment) res.attachment(ask.attachment);
  const progress: ExportProgress = { lines: 0 };
  const body = bodyOf(res, gzip);
  try {
    await writeLines(knex, ask.sources, body.out, res, () => stopped, progress);
  } catch (err) {
    log.error({ err, requestId: res.locals.requestId, tenantId, lines: progress.lines }, 'export failed');
    if (progress.lines === 0 && !res.headersSent) {
      // Nothing sent yet: an ordinary retryable Problem.
      for (const header of ['content-encoding', 'content-disposition']) res.removeHeader(header);
      return sendProblem(res, 'authorization_unavailable', {
        status: 503,
        message: 'the export could not be read; retry later',
      });
    }
    // Cut: the unfinished line, then the connection closed without the last chunk (clients see a failed transfer).
    // Ending the socket (not destroying it) lets what was written reach the client first.
    await body.finish(INCOMPLETE_MARK);
    return void res.socket?.end();
  }
  await body.finish();
  res.end();
}

export type ExportLog = { error(fields: object, message: string): void };

export function exportRouter(knex: Knex, log: ExportLog): Router {
  const r = adminRoutes();
  r.get('/tenants/:tenantId/export', (req, res) =>
    streamExport(knex, log, req, res, {
      tenantId: String(req.params.tenantId),
      query: req.query,
      refuse: (refusal) => sendRefusal(res, refusal),
    }),
  );

  return r;
}
