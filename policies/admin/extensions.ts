// Registration of person extensions and their schema versions (platform-interfaces.md). Every schema is compiled
// before it is stored, so an invalid one is refused here instead of failing later at write time.
import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { ulid } from 'ulid';
import { compileExtensionSchema } from '../../common/extension-schema.js';
import {
  adminRoutes,
  DISPLAY_NAME,
  idPages,
  parseForTenant,
  reply,
  unlessTaken,
  validate,
  type Page,
} from './support.js';
import { ifMatchOf, replyTagged, staleUnless } from './etags.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { recordChange, recordNoChange } from './audit.js';

const VERSION = /^[1-9][0-9]{0,8}$/;
const CreateExtension = z.strictObject({
  name: DISPLAY_NAME,
  schemas: z
    .record(z.string().regex(VERSION, 'schema versions are integers >= 1'), z.unknown())
    .refine((s) => Object.keys(s).length > 0, 'at least one schema version'),
});

/** Platform-assigned ids match the contract's `^[a-z][a-z0-9_]{2,63}$` and are unique across all tenants. */
const newExtensionId = () => `ext_${ulid().toLowerCase()}`;

/** Compiles every schema; the first failure is schema_invalid naming the version. */
function schemasCompile(schemas: Record<string, unknown>): Outcome<void> {
  for (const [version, schema] of Object.entries(schemas)) {
    const compiled = compileExtensionSchema(schema);
    if (!compiled.ok) return refused('schema_invalid', `schemas.${version}: ${compiled.message}`);
  }
  return done(undefined);
}

async function versionsOf(knex: Knex, extensionId: string): Promise<number[]> {
  const rows = await knex('extension_schemas')
    .where({ extension_id: extensionId })
    .orderBy('version')
    .select('version');
  return rows.map((r) => r.version as number);
}

export interface RegisteredExtension {
  extensionId: string;
  clientId: string;
  name: string;
  schemaVersions: number[];
}

/**
 * Registers an extension for the client. The tenant row is locked while its extensions are counted and the new one
 * inserted, so registrations racing at the plan's limit cannot together exceed it (FOR NO KEY UPDATE: the grants and
 * accounts being inserted meanwhile for the tenant still take their foreign-key locks on it).
 */
export async function registerExtension(
  knex: Knex,
  clientId: string,
  body: unknown,
): Promise<Outcome<RegisteredExtension>> {
  const parsed = validate(CreateExtension, body);
  if (!parsed.ok) return parsed;
  const { name, schemas } = parsed.value;
  const compiled = schemasCompile(schemas);
  if (!compiled.ok) return compiled;
  const client = await knex('clients').where({ id: clientId }).first();
  if (!client) return refused('not_found');
  return unlessTaken('the client already has an extension with this name', async () => {
    const created = await knex.transaction(async (trx) => {
      const tenant = await trx('tenants')
        .join('plans', 'plans.id', 'tenants.plan')
        .where('tenants.id', client.tenant_id)
        .forNoKeyUpdate('tenants')
        .first('plans.max_extensions');
      const [registered] = await trx('extensions').where({ tenant_id: client.tenant_id }).count({ count: '*' });
      if (Number(registered!.count) >= tenant.max_extensions) return undefined;
      const extensionId = newExtensionId();
      await trx('extensions').insert({ id: extensionId, tenant_id: client.tenant_id, client_id: client.id, name });
      await trx('extension_schemas').insert(
        Object.entries(schemas).map(([version, schema]) => ({
          extension_id: extensionId,
          version: Number(version),
          schema: JSON.stringify(schema),
        })),
      );
      return extensionId;
    });
    if (!created) return refused('quota_exceeded', "the tenant's extension count is at its plan limit");
    const registered = {
      extensionId: created,
      clientId: client.id,
      name,
      schemaVersions: await versionsOf(knex, created),
    };
    await recordChange({
      action: 'extension.create',
      target: { type: 'extension', id: created },
      tenantId: client.tenant_id,
      changes: {
        clientId: { from: null, to: client.id },
        name: { from: null, to: name },
        schemaVersions: { from: null, to: registered.schemaVersions },
      },
    });
    return done(registered);
  });
}

/** Extensions with their schema versions aggregated, so a listing is one read however long it is. */
const extensionsWithVersions = (knex: Knex) =>
  knex('extensions as e')
    .leftJoin('extension_schemas as s', 's.extension_id', 'e.id')
    .groupBy('e.id')
    .select(
      'e.id',
      'e.client_id',
      'e.name',
      knex.raw(
        `coalesce(array_agg(s.version order by s.version) filter (where s.version is not null), '{}') as versions`,
      ),
    );

interface ExtensionRow {
  id: string;
  client_id: string;
  name: string;
  versions: unknown[];
}
const extensionView = (e: ExtensionRow) => ({
  extensionId: e.id,
  clientId: e.client_id,
  name: e.name,
  schemaVersions: e.versions.map(Number),
});

/**
 * What an extension's ETag is of: its id and versions. Its client and name never change and a registered version's
 * schema is immutable, so the versions are its whole changeable state.
 */
export const extensionState = ({ extensionId, schemaVersions }: { extensionId: string; schemaVersions: number[] }) => ({
  extensionId,
  schemaVersions,
});

/** The tenant's registered extensions with their schema versions, oldest first. */
export async function listExtensions(knex: Knex, tenantId: string): Promise<RegisteredExtension[]> {
  const rows = await extensionsWithVersions(knex)
    .where('e.tenant_id', tenantId)
    .orderBy('e.created_at')
    .orderBy('e.id');
  return rows.map(extensionView);
}

const extensionPages = idPages('ext');
const ExtensionQuery = extensionPages.query({});

/** A page of the tenant's extensions in id order (ids are ULIDs: creation order), each with its schema versions. */
async function extensionPage(knex: Knex, tenantId: string, query: unknown): Promise<Page<RegisteredExtension>> {
  const parsed = await parseForTenant(knex, tenantId, ExtensionQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, cursor } = parsed.value;
  const rows: ExtensionRow[] = await extensionsWithVersions(knex)
    .where('e.tenant_id', tenantId)
    .modify((q) => {
      if (cursor) q.where('e.id', '>', cursor);
    })
    .orderBy('e.id')
    .limit(limit + 1);
  const { items, nextCursor } = extensionPages.page(rows, limit, (e) => e.id);
  return done({ items: items.map(extensionView), nextCursor });
}

export type ExtensionWithSchemas = RegisteredExtension & { tenantId: string; schemas: Record<string, unknown> };

/** One extension with every registered schema by version. */
async function extensionById(knex: Knex, extensionId: string): Promise<Outcome<ExtensionWithSchemas>> {
  const row = await knex('extensions').where({ id: extensionId }).first('id', 'tenant_id', 'client_id', 'name');
  if (!row) return refused('not_found');
  const schemas = await knex('extension_schemas')
    .where({ extension_id: extensionId })
    .orderBy('version')
    .select('version', 'schema');
  return done({
    ...extensionView({ ...row, versions: schemas.map((s) => s.version) }),
    tenantId: row.tenant_id,
    schemas: Object.fromEntries(schemas.map((s) => [String(s.version), s.schema])),
  });
}

/** Adds a schema version to an extension. A registered version is immutable: the same schema again changes nothing. */
export async function addSchemaVersion(
  knex: Knex,
  extensionId: string,
  version: string,
  body: unknown,
  ifMatch?: string,
): Promise<Outcome<{ extensionId: string; schemaVersions: number[] }>> {
  // Locked while versions are compared and added (FOR NO KEY UPDATE: records being written keep their key-share lock).
  const extension = VERSION.test(version)
    ? await knex('extensions').where({ id: extensionId }).forNoKeyUpdate().first('tenant_id')
    : undefined;
  if (!extension) return refused('not_found');
  const compiled = schemasCompile({ [version]: body });
  if (!compiled.ok) return compiled;
  const schema = JSON.stringify(body);
  const before = await versionsOf(knex, extensionId);
  const stale = staleUnless(ifMatch, extensionState({ extensionId, schemaVersions: before }));
  if (stale) return stale;
  const added = await knex('extension_schemas')
    .insert({ extension_id: extensionId, version: Number(version), schema })
    .onConflict(['extension_id', 'version'])
    .ignore()
    .returning('version');
  const same = await knex('extension_schemas')
    .where({ extension_id: extensionId, version: Number(version) })
    .whereRaw('schema = ?::jsonb', [schema])
    .first();
  if (!same) return refused('already_exists', `schema version ${version} is registered with a different schema`);
  const schemaVersions = await versionsOf(knex, extensionId);
  if (added.length) {
    await recordChange({
      action: 'extension.schema_add',
      target: { type: 'extension', id: extensionId },
      tenantId: extension.tenant_id,
      changes: { schemaVersions: { from: before, to: schemaVersions } },
    });
  } else recordNoChange(); // the same schema again: nothing changed
  return done({ extensionId, schemaVersions });
}

export function extensionsRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.post('/clients/:clientId/extensions', async (req, res) =>
    replyTagged(res, await registerExtension(knex, req.params.clientId, req.body), extensionState, 201),
  );
  r.get('/tenants/:tenantId/extensions', async (req, res) =>
    reply(res, await extensionPage(knex, req.params.tenantId, req.query)),
  );
  r.get('/extensions/:extensionId', async (req, res) =>
    replyTagged(res, await extensionById(knex, req.params.extensionId), extensionState),
  );
  r.put('/extensions/:extensionId/schemas/:version', async (req, res) =>
    replyTagged(
      res,
      await addSchemaVersion(knex, req.params.extensionId, req.params.version, req.body, ifMatchOf(req)),
      extensionState,
    ),
  );
  return r;
}
