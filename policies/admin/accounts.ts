// Service accounts (the subject of workload tokens) and the lifecycle of every account: status, epoch, sessions.
// Each change is a row the PDP and the issuer read on their next request; nothing is cached.
import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { isId, newId } from '../../common/ids.js';
import { revokeAccountSessions } from '../../common/sessions.js';
import { CAPABILITIES } from '../../wire/decision.js';
import {
  adminRoutes,
  DISPLAY_NAME,
  idPages,
  reply,
  unlessTaken,
  validate,
  parseForTenant,
  type Page,
} from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { fieldChanges, recordChange } from './audit.js';
import { ifMatchOf, replyTagged, staleUnless } from './etags.js';

const CreateServiceAccount = z.strictObject({
  clientId: z.string().min(1).max(200),
  name: DISPLAY_NAME,
  capabilities: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length),
});
/** Status for any account; a service account's name and capabilities too (replaced whole). */
const UpdateAccount = z
  .strictObject({
    status: z.enum(['active', 'disabled']).optional(),
    name: DISPLAY_NAME.optional(),
    capabilities: CreateServiceAccount.shape.capabilities.optional(),
  })
  // A field sent as undefined (the console's status form without a status) names nothing.
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'name at least one of status, name, capabilities');

interface AccountRow {
  id: string;
  tenant_id: string;
  kind: string;
  status: string;
  epoch: number;
  person_id: string | null;
  client_id: string | null;
  name: string | null;
  capabilities: string[];
}

/** Accounts with their service-account capabilities aggregated, so a listing is one read however long it is. */
const accountsWithCapabilities = (knex: Knex) =>
  knex('accounts as a')
    .leftJoin('service_account_capabilities as c', 'c.account_id', 'a.id')
    .groupBy('a.id')
    .select(
      'a.*',
      knex.raw(
        'coalesce(array_agg(c.capability_id order by c.capability_id) ' +
          "filter (where c.capability_id is not null), '{}') as capabilities",
      ),
    );

function view(a: AccountRow) {
  const common = { accountId: a.id, kind: a.kind, status: a.status, epoch: a.epoch, tenantId: a.tenant_id };
  return a.kind === 'service'
    ? { ...common, clientId: a.client_id, name: a.name, capabilities: a.capabilities }
    : { ...common, personId: a.person_id };
}

type AccountView = ReturnType<typeof view>;
const account = (knex: Knex, id: string) => (isId('acc', id) ? knex('accounts').where({ id }) : undefined);

const accountPages = idPages('acc');
const ServiceAccountQuery = accountPages.query({ status: z.enum(['active', 'disabled']).optional() });

/** A page of the tenant's service accounts in creation order (ids are ULIDs), optionally of one status. */
async function serviceAccountPage(knex: Knex, tenantId: string, query: unknown): Promise<Page<AccountView>> {
  const parsed = await parseForTenant(knex, tenantId, ServiceAccountQuery, query);
  if (!parsed.ok) return parsed;
  const { limit, cursor, status } = parsed.value;
  const rows: AccountRow[] = await accountsWithCapabilities(knex)
    .where({ 'a.tenant_id': tenantId, 'a.kind': 'service' })
    .modify((q) => {
      if (cursor) q.where('a.id', '>', cursor);
      if (status) q.where('a.status', status);
    })
    .orderBy('a.id')
    .limit(limit + 1);
  const { items, nextCursor } = accountPages.page(rows, limit, (a) => a.id);
  return done({ items: items.map(view), nextCursor });
}

/** The tenant's service accounts, oldest first. */
export async function listServiceAccounts(knex: Knex, tenantId: string): Promise<AccountView[]> {
  const rows: AccountRow[] = await accountsWithCapabilities(knex)
    .where({ 'a.tenant_id': tenantId, 'a.kind': 'service' })
    .orderBy('a.created_at')
    .orderBy('a.id');
  return rows.map(view);
}

/** The account `accountId` as GET shows it (with a service account's capabilities), or undefined. */
async function accountView(knex: Knex, accountId: string): Promise<AccountView | undefined> {
  const row: AccountRow | undefined = isId('acc', accountId)
    ? await accountsWithCapabilities(knex).where('a.id', accountId).first()
    : undefined;
  return row && view(row);
}

export async function accountById(knex: Knex, accountId: string): Promise<Outcome<AccountView>> {
  const found = await accountView(knex, accountId);
  return found ? done(found) : refused('not_found');
}

/** What a new service account's ETag is of: the account as GET shows it. */
export const serviceAccountState = (tenantId: string, a: CreatedServiceAccount): AccountView =>
  view({ ...a, id: a.accountId, tenant_id: tenantId, kind: 'service', person_id: null, client_id: a.clientId });

/** The columns an update writes besides capabilities, from the fields it names. */
const accountColumns = (b: z.output<typeof UpdateAccount>) => ({
  ...(b.status && { status: b.status }),
  ...(b.name && { name: b.name }),
});

/**
 * Disables or re-enables an account (its tokens are 403 subject_revoked from the next request on), or renames a
 * service account or replaces its capabilities (the next token and the next decision read them). The account row is
 * locked first, so If-Match is compared with the state this change replaces.
 */
export async function updateAccount(
  knex: Knex,
  accountId: string,
  body: unknown,
  ifMatch?: string,
): Promise<Outcome<AccountView>> {
  const parsed = validate(UpdateAccount, body);
  if (!parsed.ok) return parsed;
  const b = parsed.value;
  if (!(await account(knex, accountId)?.forNoKeyUpdate().first('id'))) return refused('not_found');
  const before = (await accountView(knex, accountId))!;
  const stale = staleUnless(ifMatch, before);
  if (stale) return stale;
  if (before.kind !== 'service' && (b.name !== undefined || b.capabilities !== undefined))
    return refused('schema_invalid', 'only a service account has a name and capabilities');
  const columns = accountColumns(b);
  if (Object.keys(columns).length) await knex('accounts').where({ id: accountId }).update(columns);
  if (b.capabilities) {
    await knex('service_account_capabilities').where({ account_id: accountId }).delete();
    const capabilities = [...new Set(b.capabilities)];
    if (capabilities.length)
      await knex('service_account_capabilities').insert(
        capabilities.map((c) => ({ account_id: accountId, capability_id: c })),
      );
  }
  const after = (await accountView(knex, accountId))!;
  await recordChange({
    action: b.status ? (after.status === 'disabled' ? 'account.disable' : 'account.enable') : 'service_account.update',
    target: { type: 'account', id: accountId },
    tenantId: after.tenantId,
    changes: fieldChanges(before, after, ['status', 'name', 'capabilities']),
  });
  return done(after);
}

/** Advances the account's epoch by one: tokens carrying the old one are 403 epoch_changed from the next request on. */
export async function advanceEpoch(
  knex: Knex,
  accountId: string,
): Promise<Outcome<{ accountId: string; epoch: number }>> {
  const [row] = (await account(knex, accountId)?.increment('epoch', 1).returning(['id', 'epoch', 'tenant_id'])) ?? [];
  if (!row) return refused('not_found');
  await recordChange({
    action: 'account.epoch_advance',
    target: { type: 'account', id: row.id },
    tenantId: row.tenant_id,
    changes: { epoch: { from: row.epoch - 1, to: row.epoch } },
  });
  return done({ accountId: row.id, epoch: row.epoch });
}

/** Ends every session and refresh-token family of the account (common/sessions.ts). */
export async function revokeSessions(knex: Knex, accountId: string): Promise<Outcome<void>> {
  const row = await account(knex, accountId)?.first('id', 'tenant_id');
  if (!row) return refused('not_found');
  await revokeAccountSessions(knex, row.id);
  await recordChange({
    action: 'account.sessions_revoke',
    target: { type: 'account', id: row.id },
    tenantId: row.tenant_id,
  });
  return done(undefined);
}

export interface ConsentView {
  clientId: string;
  appName: string;
  since: string;
  revokedAt: string | null;
}

/**
 * The authorizations (consents) of a login account of `tenantId`, newest first, or undefined when it has no such
 * account.
 */
export async function consentsOf(knex: Knex, tenantId: string, accountId: string): Promise<ConsentView[] | undefined> {
  if (!(await account(knex, accountId)?.where({ tenant_id: tenantId, kind: 'person' }).first('id'))) return undefined;
  const rows: { client_id: string; name: string; created_at: Date; revoked_at: Date | null }[] = await knex('sessions')
    .join('clients', 'clients.id', 'sessions.client_id')
    .where('sessions.account_id', accountId)
    .orderBy('sessions.created_at', 'desc')
    .select('sessions.client_id', 'clients.name', 'sessions.created_at', 'sessions.revoked_at');
  return rows.map((r) => ({
    clientId: r.client_id,
    appName: r.name,
    since: new Date(r.created_at).toISOString(),
    revokedAt: r.revoked_at && new Date(r.revoked_at).toISOString(),
  }));
}

export interface CreatedServiceAccount {
  accountId: string;
  clientId: string;
  name: string;
  capabilities: string[];
  status: string;
  epoch: number;
}

/**
 * Creates the service account of a client of `tenantId` with its capabilities. One per client (unique index,
 * migration 003), so the subject of a client_credentials token is unambiguous.
 */
export async function createServiceAccount(
  knex: Knex,
  tenantId: string,
  body: unknown,
): Promise<Outcome<CreatedServiceAccount>> {
  const parsed = validate(CreateServiceAccount, body);
  if (!parsed.ok) return parsed;
  const { clientId, name } = parsed.value;
  const client = await knex('clients').where({ id: clientId, tenant_id: tenantId }).first('id');
  if (!client) return refused('not_found', 'no such client in this tenant');
  const capabilities = [...new Set(parsed.value.capabilities)].sort();
  return unlessTaken('this client already has a service account', async () => {
    const accountId = newId('acc');
    const row = await knex.transaction(async (trx) => {
      const [created] = await trx('accounts')
        .insert({ id: accountId, tenant_id: tenantId, kind: 'service', client_id: clientId, name })
        .returning('*');
      if (capabilities.length)
        await trx('service_account_capabilities').insert(
          capabilities.map((c) => ({ account_id: accountId, capability_id: c })),
        );
      return created as AccountRow;
    });
    const created = {
      accountId,
      clientId: row.client_id!,
      name: row.name!,
      capabilities,
      status: row.status,
      epoch: row.epoch,
    };
    await recordChange({
      action: 'service_account.create',
      target: { type: 'account', id: accountId },
      tenantId,
      changes: fieldChanges(undefined, created, ['clientId', 'name', 'capabilities', 'status']),
    });
    return done(created);
  });
}

export function accountsRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.get('/tenants/:tenantId/service-accounts', async (req, res) =>
    reply(res, await serviceAccountPage(knex, req.params.tenantId, req.query)),
  );
  r.post('/tenants/:tenantId/service-accounts', async (req, res) =>
    replyTagged(
      res,
      await createServiceAccount(knex, req.params.tenantId, req.body),
      (a) => serviceAccountState(req.params.tenantId, a),
      201,
    ),
  );
  r.get('/accounts/:accountId', async (req, res) => replyTagged(res, await accountById(knex, req.params.accountId)));
  r.patch('/accounts/:accountId', async (req, res) =>
    replyTagged(res, await updateAccount(knex, req.params.accountId, req.body, ifMatchOf(req))),
  );
  r.post('/accounts/:accountId/epoch', async (req, res) => reply(res, await advanceEpoch(knex, req.params.accountId)));
  r.post('/accounts/:accountId/sessions/revoke', async (req, res) =>
    reply(res, await revokeSessions(knex, req.params.accountId), 204),
  );
  return r;
}
