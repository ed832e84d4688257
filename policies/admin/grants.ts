import type { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { CAPABILITIES } from '../../wire/decision.js';
import { findClient } from './clients.js';
import { adminRoutes, reply, validate } from './support.js';
import { done, refused, type Outcome, type Refusal } from '../../wire/outcome.js';
import { recordChange } from './audit.js';
import { ifMatchOf, replyTagged, staleUnless } from './etags.js';

const PutGrant = z.strictObject({ capabilities: z.array(z.enum(CAPABILITIES)).max(CAPABILITIES.length) });

export interface Grant {
  tenantId: string;
  clientId: string;
  capabilities: string[];
}

/** Every client's granted capabilities in one tenant, by client id (clients with no grant are absent). */
export async function grantsOfTenant(knex: Knex, tenantId: string): Promise<Map<string, string[]>> {
  const grants = new Map<string, string[]>();
  for (const g of await knex('tenant_grants').where({ tenant_id: tenantId }).orderBy(['client_id', 'capability_id']))
    grants.set(g.client_id, [...(grants.get(g.client_id) ?? []), g.capability_id]);
  return grants;
}

const capabilitiesOf = async (knex: Knex, tenantId: string, clientId: string) =>
  (await knex('tenant_grants').where({ tenant_id: tenantId, client_id: clientId }).orderBy('capability_id')).map(
    (g) => g.capability_id as string,
  );

/** Replaces the tenant's grant to the client whole; the PDP and the issuer read it on their next request. */
export async function putGrant(
  knex: Knex,
  tenantId: string,
  clientId: string,
  body: unknown,
  ifMatch?: string,
): Promise<Outcome<Grant>> {
  const parsed = validate(PutGrant, body);
  if (!parsed.ok) return parsed;
  const capabilities = [...new Set(parsed.value.capabilities)].sort();
  let stale: Refusal | undefined;
  const replaced = await knex.transaction(async (trx) => {
    // Concurrent replacements of one grant queue on the client row instead of racing delete-then-insert; a client
    // deleted while this one waited is not found. FOR NO KEY UPDATE, like every lock taken on a row that stays: it
    // queues this change and a deletion, but not the foreign-key checks of rows being inserted that name the client
    // (FOR UPDATE would, and deadlocked with a registration holding its tenant row: decisions.md "Row locks").
    if (!(await trx('clients').where({ id: clientId, tenant_id: tenantId }).forNoKeyUpdate().first('id'))) return false;
    const before = await capabilitiesOf(trx, tenantId, clientId);
    stale = staleUnless(ifMatch, { tenantId, clientId, capabilities: before });
    if (stale) return false;
    await trx('tenant_grants').where({ tenant_id: tenantId, client_id: clientId }).delete();
    if (capabilities.length)
      await trx('tenant_grants').insert(
        capabilities.map((c) => ({ tenant_id: tenantId, client_id: clientId, capability_id: c })),
      );
    await recordChange({
      action: 'grant.replace',
      target: { type: 'grant', id: clientId },
      tenantId,
      changes:
        before.join(' ') === capabilities.join(' ') ? undefined : { capabilities: { from: before, to: capabilities } },
    });
    return true;
  });
  if (stale) return stale;
  return replaced ? done({ tenantId, clientId, capabilities }) : refused('not_found');
}

async function getGrant(knex: Knex, tenantId: string, clientId: string): Promise<Outcome<Grant>> {
  if (!(await findClient(knex, tenantId, clientId))) return refused('not_found');
  return done({ tenantId, clientId, capabilities: await capabilitiesOf(knex, tenantId, clientId) });
}

async function withdrawGrant(knex: Knex, tenantId: string, clientId: string): Promise<Outcome<void>> {
  if (!(await findClient(knex, tenantId, clientId))) return refused('not_found');
  const before = await capabilitiesOf(knex, tenantId, clientId);
  await knex('tenant_grants').where({ tenant_id: tenantId, client_id: clientId }).delete();
  await recordChange({
    action: 'grant.withdraw',
    target: { type: 'grant', id: clientId },
    tenantId,
    // Withdrawing a grant that held nothing changes nothing (the entry still says it was asked for).
    changes: before.length ? { capabilities: { from: before, to: [] } } : undefined,
  });
  return done(undefined);
}

/** A tenant's grant of capabilities to one app: replaced whole by PUT, withdrawn by DELETE. */
export function grantsRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.put('/tenants/:tenantId/grants/:clientId', async (req, res) =>
    replyTagged(res, await putGrant(knex, req.params.tenantId, req.params.clientId, req.body, ifMatchOf(req))),
  );
  r.get('/tenants/:tenantId/grants/:clientId', async (req, res) =>
    replyTagged(res, await getGrant(knex, req.params.tenantId, req.params.clientId)),
  );
  r.delete('/tenants/:tenantId/grants/:clientId', async (req, res) =>
    reply(res, await withdrawGrant(knex, req.params.tenantId, req.params.clientId), 204),
  );
  return r;
}
