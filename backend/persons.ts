// Routes of contract §4.4–4.8: a person, and the calling app's extension records about that person. The gateway has
// already had the PDP check the capability and the tenant's relationship to the person.
import express, { Router, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import { sendProblem, sendRefusal } from '../common/http.js';
import { isExtensionId } from '../common/ids.js';
import type { CallContext } from '../common/internal-context.js';
import { extensionRecords, type RecordKey } from './extension-records.js';
import { extensionRegistry } from './extension-registry.js';
import { parseExtensionWrite } from './extension-write.js';
import { listCursors, type CursorScope } from './list-cursor.js';
import { deletePrecondition, putPrecondition } from './preconditions.js';
import { personOf } from './resources.js';

/** Decimal digits only (no sign, point or exponent); leading zeros are the same integer. */
const LIMIT = /^[0-9]+$/;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const MAX_CURSOR_CHARS = 512;

const contextOf = (res: Response) => res.locals.context as CallContext;
const keyOf = (req: Request, res: Response): RecordKey => ({
  tenantId: contextOf(res).tenantId,
  personId: req.params.personId as string,
  extensionId: req.params.extensionId as string,
});

export function personResourcesRouter(knex: Knex, cursorSecret: string): Router {
  const records = extensionRecords(knex);
  const registry = extensionRegistry(knex);
  const cursors = listCursors(cursorSecret);
  const r = Router();

  r.get('/v1/persons/:personId', async (req, res) => {
    const row = await knex('persons').where({ id: req.params.personId }).first('id', 'display_name', 'created_at');
    if (!row) return sendProblem(res, 'not_found');
    res.json(personOf(row));
  });

  r.get('/v1/persons/:personId/extensions', async (req, res) => {
    const { tenantId, clientId } = contextOf(res);
    const scope: CursorScope = { tenantId, clientId, personId: req.params.personId! };
    const { limit: rawLimit, cursor } = req.query;
    if (
      rawLimit !== undefined &&
      (typeof rawLimit !== 'string' || !LIMIT.test(rawLimit) || +rawLimit < 1 || +rawLimit > MAX_LIMIT)
    )
      return sendProblem(res, 'schema_invalid', { message: `limit must be an integer from 1 to ${MAX_LIMIT}` });
    const limit = rawLimit === undefined ? DEFAULT_LIMIT : Number(rawLimit);
    let after = '';
    if (cursor !== undefined) {
      const decoded =
        typeof cursor === 'string' && cursor.length <= MAX_CURSOR_CHARS ? cursors.decode(scope, cursor) : undefined;
      if (!decoded)
        return sendProblem(res, 'schema_invalid', { message: 'cursor is not a value this listing returned' });
      after = decoded;
    }
    // One row beyond the page tells whether another page exists without a count.
    const rows = await records.list(scope, clientId, after, limit + 1);
    const items = rows.slice(0, limit);
    const nextCursor = rows.length > limit ? cursors.encode(scope, items.at(-1)!.extensionId) : null;
    res.json({ items, nextCursor });
  });

  // Unregistered, owned by another app, and absent data: the same bare 404 (contract §4.6).
  const notFound = (res: Response) => sendProblem(res, 'not_found');

  r.get('/v1/persons/:personId/extensions/:extensionId', async (req, res) => {
    if (!isExtensionId(req.params.extensionId)) return notFound(res);
    const record = await records.get(keyOf(req, res), contextOf(res).clientId);
    if (!record) return notFound(res);
    res.setHeader('etag', record.etag).json(record);
  });

  r.put(
    '/v1/persons/:personId/extensions/:extensionId',
    express.raw({ type: () => true, limit: '64kb' }),
    async (req, res) => {
      const precondition = putPrecondition(req.get('if-match'), req.get('if-none-match'));
      if (!precondition)
        return sendProblem(res, 'precondition_required', {
          message: 'send exactly one of If-None-Match: * (create) and If-Match: "<etag>" (update)',
        });
      const key = keyOf(req, res);
      const { clientId } = contextOf(res);
      if (!isExtensionId(key.extensionId) || !(await registry.ownedBy(key.extensionId, clientId))) return notFound(res);
      const parsed = parseExtensionWrite(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      if (!parsed.ok) return sendRefusal(res, parsed);
      const write = parsed.value;
      const validate = await registry.validator(key.extensionId, write.schemaVersion);
      if (!validate && !(await registry.registered(key.extensionId))) return notFound(res);
      if (!validate)
        return sendProblem(res, 'schema_invalid', {
          message: `schemaVersion ${write.schemaVersion} is not registered for this extension`,
        });
      if (!validate(write.data))
        return sendProblem(res, 'schema_invalid', {
          message: `data does not match schema version ${write.schemaVersion}`,
        });

      const quotaFull = () =>
        sendProblem(res, 'quota_exceeded', { message: "the tenant's record quota for this extension is full" });
      if (precondition.create) {
        const result = await records.create(key, write, clientId);
        if ('exists' in result) return sendProblem(res, 'already_exists', { headers: { etag: result.exists } });
        if ('quotaExceeded' in result) return quotaFull();
        const location = `/v1/persons/${key.personId}/extensions/${key.extensionId}`;
        return void res
          .status(201)
          .setHeader('etag', result.created.etag)
          .setHeader('location', location)
          .json(result.created);
      }
      const result = await records.update(key, precondition.ifMatch, write, clientId);
      if ('absent' in result) return notFound(res);
      if ('conflict' in result) return sendProblem(res, 'revision_conflict', { headers: { etag: result.conflict } });
      if ('quotaExceeded' in result) return quotaFull();
      res.setHeader('etag', result.updated.etag).json(result.updated);
    },
  );

  r.delete('/v1/persons/:personId/extensions/:extensionId', async (req, res) => {
    const precondition = deletePrecondition(req.get('if-match'));
    if (!precondition)
      return sendProblem(res, 'precondition_required', { message: 'If-Match: "<etag>" or * is required' });
    const key = keyOf(req, res);
    if (!isExtensionId(key.extensionId) || !(await registry.ownedBy(key.extensionId, contextOf(res).clientId)))
      return notFound(res);
    const result = await records.remove(key, precondition.ifMatch);
    if ('conflict' in result) return sendProblem(res, 'revision_conflict', { headers: { etag: result.conflict } });
    // An absent record is 204 (idempotent), but not of an extension that is gone (§7.2: unregistered is 404).
    if ('absent' in result && !(await registry.registered(key.extensionId))) return notFound(res);
    res.status(204).end();
  });
  return r;
}
