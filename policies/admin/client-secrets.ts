// Secret rotation for confidential clients (contract §5.9): a next secret is created and both it and the current one
// authenticate, the current one for at most 7 more days (its expires_at, checked by the issuer); promotion makes the
// next secret the only one at once. Secrets are shown once and stored as scrypt hashes.
import type { Router } from 'express';
import type { Knex } from 'knex';
import { newId } from '../../common/ids.js';
import { digestSecret, randomSecret } from '../../common/secrets.js';
import { clientView, type ClientView } from './clients.js';
import { adminRoutes, reply } from './support.js';
import { done, refused, type Outcome } from '../../wire/outcome.js';
import { REDACTED, recordChange } from './audit.js';

/** Contract §8: secret rotation overlap, at most 7 days. */
export const ROTATION_OVERLAP_MS = 7 * 24 * 60 * 60 * 1000;

/** Creates the client's next secret; the only time it is ever readable is in this outcome. */
export async function createNextSecret(knex: Knex, clientId: string): Promise<Outcome<{ clientSecret: string }>> {
  const secret = randomSecret();
  const secretHash = digestSecret(secret);
  return knex.transaction(async (trx) => {
    // Concurrent rotations of one client queue on its row, so at most one next secret can exist.
    const client = await trx('clients').where('id', clientId).forNoKeyUpdate().first('id', 'type', 'tenant_id');
    if (!client) return refused('not_found');
    if (client.type !== 'confidential') return refused('schema_invalid', 'a public client has no secret');
    if (await hasPendingSecret(trx, client.id))
      return refused('already_exists', 'a next secret is already pending; promote it first');
    await trx('client_secrets')
      .where({ client_id: client.id, state: 'current' })
      .update({ expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS) });
    await trx('client_secrets').insert({
      id: newId('key'),
      client_id: client.id,
      secret_hash: secretHash,
      state: 'next',
    });
    await recordChange({
      action: 'client_secret.create',
      target: { type: 'client', id: client.id },
      tenantId: client.tenant_id,
      changes: { nextSecret: { from: null, to: REDACTED } },
    });
    return done({ clientSecret: secret });
  });
}

/** The next secret becomes the only one; the old one stops working at once. */
export async function promoteNextSecret(knex: Knex, clientId: string): Promise<Outcome<ClientView>> {
  return knex.transaction(async (trx) => {
    const client = await trx('clients').where('id', clientId).forNoKeyUpdate().first('*');
    if (!client) return refused('not_found');
    const next = await trx('client_secrets').where({ client_id: client.id, state: 'next' }).first('id');
    if (!next) return refused('schema_invalid', 'no next secret to promote');
    await trx('client_secrets').where({ client_id: client.id, state: 'current' }).delete();
    await trx('client_secrets').where('id', next.id).update({ state: 'current', expires_at: null });
    await recordChange({
      action: 'client_secret.promote',
      target: { type: 'client', id: client.id },
      tenantId: client.tenant_id,
      changes: { secret: { from: REDACTED, to: REDACTED } },
    });
    return done(clientView(client));
  });
}

/** Whether a next secret is waiting to be promoted. */
export async function hasPendingSecret(knex: Knex, clientId: string): Promise<boolean> {
  return Boolean(await knex('client_secrets').where({ client_id: clientId, state: 'next' }).first('id'));
}

/** When the client's current secret stops working: set while a next secret is pending, otherwise undefined. */
export async function currentSecretEnds(knex: Knex, clientId: string): Promise<Date | undefined> {
  const row = await knex('client_secrets').where({ client_id: clientId, state: 'current' }).first('expires_at');
  return row?.expires_at ? new Date(row.expires_at) : undefined;
}

export function clientSecretsRouter(knex: Knex): Router {
  const r = adminRoutes();
  r.post('/clients/:clientId/secrets', async (req, res) =>
    reply(res, await createNextSecret(knex, req.params.clientId), 201),
  );
  r.post('/clients/:clientId/secrets/promote', async (req, res) =>
    reply(res, await promoteNextSecret(knex, req.params.clientId)),
  );
  return r;
}
