import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { isId, newId } from '../../common/ids.js';
import { digestSecret, randomSecret } from '../../common/secrets.js';
import {
  adminRoutes,
  DISPLAY_NAME,
  LABEL,
  idPages,
  reply,
  unlessTaken,
  validate,
  parseForTenant,
  type Page,
} from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { REDACTED, fieldChanges, recordChange } from './audit.js';
import { REDIRECT_URIS } from './redirect-uris.js';
import {
  SECURITY_FIELDS,
  checkSecurity,
  securityColumns,
  securityView,
  type SecurityColumns,
} from './client-security.js';
import { ifMatchOf, replyTagged, staleUnless } from './etags.js';

const KIND_PREFIX = { third_party: 'tp', first_party: 'fp', internal: 'int' } as const;

const CreateClientFields = z.strictObject({
  slug: LABEL,
  name: DISPLAY_NAME,
  kind: z.enum(['third_party', 'first_party', 'internal']),
  type: z.enum(['confidential', 'public']),
  redirectUris: REDIRECT_URIS,
  allowedOrigins: z.array(z.url()).max(20).optional(),
  ...SECURITY_FIELDS,
});
const CreateClient = CreateClientFields.superRefine(checkSecurity);
/** Any of the app's settings a tenant admin may change after registration (slug, kind and type name what it is). */
const UpdateClient = z
  .strictObject({
    status: z.enum(['active', 'disabled']).optional(),
    name: DISPLAY_NAME.optional(),
    redirectUris: CreateClientFields.shape.redirectUris.optional(),
    allowedOrigins: z.array(z.url()).max(20).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'name at least one of status, name, redirectUris, allowedOrigins');

interface ClientRow extends Omit<SecurityColumns, 'jwks'> {
  jwks: unknown;
  id: string;
  tenant_id: string;
  slug: string;
  name: string;
  kind: string;
  type: string;
  status: string;
  redirect_uris: string[];
  allowed_origins: string[];
}
export const clientView = (c: ClientRow) => ({
  clientId: c.id,
  tenantId: c.tenant_id,
  slug: c.slug,
  name: c.name,
  kind: c.kind,
  type: c.type,
  status: c.status,
  redirectUris: c.redirect_uris,
  allowedOrigins: c.allowed_origins,
  ...securityView(c),
});
export type ClientView = ReturnType<typeof clientView>;

/** The client `clientId` of whichever tenant (the caller's authority is checked on the path: authority.ts). */
export async function clientById(knex: Knex, clientId: string): Promise<Outcome<ClientView>> {
  const row = await knex('clients').where({ id: clientId }).first();
  return row ? done(clientView(row)) : refused('not_found');
}

/** What a client's ETag is of: the client as GET shows it (a new secret is no part of it). */
export const clientState = ({ clientSecret: _, ...client }: CreatedClient): ClientView => client;

/** The tenant's client `clientId`, or undefined when there is none in that tenant. */
export async function findClient(knex: Knex, tenantId: string, clientId: string): Promise<ClientView | undefined> {
  const row = await knex('clients').where({ id: clientId, tenant_id: tenantId }).first();
  return row && clientView(row);
}

export async function listClients(knex: Knex, tenantId: string): Promise<ClientView[]> {
  return (await knex('clients').where({ tenant_id: tenantId }).orderBy('id')).map(clientView);
}

const clientPages = idPages('client');
const ClientQuery = clientPages.query({
  status: z.enum(['active', 'disabled']).optional(),
  kind: z.enum(['third_party', 'first_party', 'internal']).optional(),
});

/** A page of the tenant's clients in id order, optionally of one status or kind. */
async function clientPage(knex: Knex, tenantId: string, query: unknown): Promise<Page<ClientView>> {
  const parsed = await parseForTenant(knex, tenantId, ClientQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, cursor, status, kind } = parsed.value;
  const rows: ClientRow[] = await knex('clients')
    .where({ tenant_id: tenantId })
    .modify((q) => {
      if (cursor) q.where('id', '>', cursor);
      if (status) q.where({ status });
      if (kind) q.where({ kind });
    })
    .orderBy('id')
    .limit(limit + 1);
  const { items, nextCursor } = clientPages.page(rows, limit, (c) => c.id);
  return done({ items: items.map(clientView), nextCursor });
}

/** The columns an update writes, from the fields it names. */
const updateColumns = (b: z.output<typeof UpdateClient>) => ({
  ...(b.status && { status: b.status }),
  ...(b.name && { name: b.name }),
  ...(b.redirectUris && { redirect_uris: JSON.stringify(b.redirectUris) }),
  ...(b.allowedOrigins && { allowed_origins: JSON.stringify(b.allowedOrigins) }),
});

/**
 * Changes a client's status, name, redirect URIs or allowed origins. A disabled client's tokens are refused on their
 * next request (403 client_disabled); redirect URIs and origins apply to the next authorize and token request.
 */
export async function updateClient(
  knex: Knex,
  clientId: string,
  body: unknown,
  ifMatch?: string,
): Promise<Outcome<ClientView>> {
  const parsed = validate(UpdateClient, body);
  if (!parsed.ok) return parsed;
  const before = await knex('clients').where({ id: clientId }).forNoKeyUpdate().first();
  if (!before) return refused('not_found');
  const stale = staleUnless(ifMatch, clientView(before));
  if (stale) return stale;
  const [row] = await knex('clients').where({ id: clientId }).update(updateColumns(parsed.value)).returning('*');
  const [was, now] = [clientView(before), clientView(row)];
  const statusChanged = was.status !== now.status;
  await recordChange({
    action: statusChanged ? (now.status === 'disabled' ? 'client.disable' : 'client.enable') : 'client.update',
    target: { type: 'client', id: row.id },
    tenantId: row.tenant_id,
    changes: fieldChanges(was, now, ['status', 'name', 'redirectUris', 'allowedOrigins']),
  });
  return done(now);
}

export type CreatedClient = ClientView & { clientSecret?: string };

/** Registers a client; a confidential one gets its first secret, returned once and stored only as a digest. */
export async function createClient(knex: Knex, tenantId: string, body: unknown): Promise<Outcome<CreatedClient>> {
  const parsed = validate(CreateClient, body);
  if (!parsed.ok) return parsed;
  const b = parsed.value;
  const tenant = isId('ten', tenantId) ? await knex('tenants').where({ id: tenantId }).first('label') : undefined;
  if (!tenant) return refused('not_found');
  const id = `${KIND_PREFIX[b.kind]}_${tenant.label}_${b.slug}`;
  const security = securityColumns(b);
  // A private_key_jwt app authenticates with its registered keys only: it gets no secret.
  const secret =
    b.type === 'confidential' && security.token_endpoint_auth_method !== 'private_key_jwt' ? randomSecret() : undefined;
  const secretHash = secret && digestSecret(secret);
  return unlessTaken('client slug is taken', async () => {
    const row = await knex.transaction(async (trx) => {
      const [client] = await trx('clients')
        .insert({
          id,
          tenant_id: tenantId,
          slug: b.slug,
          name: b.name,
          kind: b.kind,
          type: b.type,
          redirect_uris: JSON.stringify(b.redirectUris),
          allowed_origins: JSON.stringify(b.allowedOrigins ?? []),
          ...security,
        })
        .returning('*');
      if (secretHash)
        await trx('client_secrets').insert({
          id: newId('key'),
          client_id: id,
          secret_hash: secretHash,
          state: 'current',
        });
      return client as ClientRow;
    });
    const created = clientView(row);
    await recordChange({
      action: 'client.create',
      target: { type: 'client', id: created.clientId },
      tenantId,
      changes: {
        ...fieldChanges(undefined, created, [
          'name',
          'kind',
          'type',
          'status',
          'redirectUris',
          'allowedOrigins',
          'tokenEndpointAuthMethod',
          'dpopBoundAccessTokens',
          'requirePushedAuthorizationRequests',
          'securityProfile',
        ]),
        ...(secret && { clientSecret: { from: null, to: REDACTED } }),
      },
    });
    return done({ ...created, ...(secret && { clientSecret: secret }) });
  });
}

/** How many records about persons the app's extensions hold (the platform never deletes them). */
export async function storedRecordsOf(knex: Knex, clientId: string): Promise<number> {
  const [counted] = await knex('person_extensions as pe')
    .join('extensions as e', 'e.id', 'pe.extension_id')
    .where('e.client_id', clientId)
    .count({ records: '*' });
  return Number(counted?.records ?? 0);
}

/**
 * Deletes an app that owns no stored records, with everything that exists only for it: its secrets, the tenant's
 * grant, its consents and token families, its service account and its (empty) extensions. Its access tokens are 403
 * client_unknown from their next request. An app whose extensions hold records is refused (409 already_exists): the
 * platform never deletes an app's data (platform-interfaces.md, data ownership), so such an app is disabled instead.
 */
export async function deleteClient(knex: Knex, clientId: string): Promise<Outcome<void>> {
  const row: ClientRow | undefined = await knex('clients').where({ id: clientId }).forUpdate().first();
  if (!row) return refused('not_found');
  // A record being written holds a key-share lock on its extension until it commits: locking the app's extensions
  // waits for those writes and keeps new ones out, so the count below is final until this change commits.
  const extensionIds: string[] = (await knex('extensions').where({ client_id: clientId }).forUpdate().select('id')).map(
    (e: { id: string }) => e.id,
  );
  const records = await storedRecordsOf(knex, clientId);
  if (records > 0)
    return refused(
      'already_exists',
      `the app owns ${records} stored records, which the platform never deletes: ` +
        'disable the app instead, or let it delete its records first',
    );
  const serviceAccounts = knex('accounts').where({ client_id: clientId }).select('id');
  // Every consent (oidc-provider Grant) of the app has a session row whose id is the grant id, and its codes and
  // refresh tokens carry that grant_id: the family goes by the grant_id index. Their sessions go below.
  await knex('oidc_payloads')
    .whereIn('grant_id', knex('sessions').where({ client_id: clientId }).select('id'))
    .delete();
  await knex('sessions').where({ client_id: clientId }).orWhereIn('account_id', serviceAccounts).delete();
  await knex('service_account_capabilities').whereIn('account_id', serviceAccounts).delete();
  await knex('accounts').where({ client_id: clientId }).delete();
  await knex('tenant_grants').where({ client_id: clientId }).delete();
  await knex('client_secrets').where({ client_id: clientId }).delete();
  await knex('extension_record_counts').whereIn('extension_id', extensionIds).delete();
  await knex('extension_schemas').whereIn('extension_id', extensionIds).delete();
  await knex('extensions').whereIn('id', extensionIds).delete();
  await knex('clients').where({ id: clientId }).delete();
  await recordChange({
    action: 'client.delete',
    target: { type: 'client', id: clientId },
    tenantId: row.tenant_id,
    changes: fieldChanges(clientView(row), {}, ['name', 'kind', 'type', 'status']),
  });
  return done(undefined);
}

export function clientsRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.get('/tenants/:tenantId/clients', async (req, res) =>
    reply(res, await clientPage(knex, req.params.tenantId, req.query)),
  );
  r.post('/tenants/:tenantId/clients', async (req, res) =>
    replyTagged(res, await createClient(knex, req.params.tenantId, req.body), clientState, 201),
  );
  r.get('/clients/:clientId', async (req, res) => replyTagged(res, await clientById(knex, req.params.clientId)));
  r.patch('/clients/:clientId', async (req, res) =>
    replyTagged(res, await updateClient(knex, req.params.clientId, req.body, ifMatchOf(req))),
  );
  r.delete('/clients/:clientId', async (req, res) => reply(res, await deleteClient(knex, req.params.clientId), 204));
  return r;
}
