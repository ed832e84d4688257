// Secret rotation for confidential clients (contract §5.9): a next secret is created and both it and the current one
// authenticate, the current one for at most 7 more days (its expires_at, checked by the issuer); promotion makes the
// next secret the only one at once. Secrets are shown once and stored as scrypt hashes.
import { Router } from 'express';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { newId } from '../../common/ids.js';
import { hashSecret, randomSecret } from '../../common/secrets.js';
import { clientView } from './clients.js';

/** Contract §8: secret rotation overlap, at most 7 days. */
export const ROTATION_OVERLAP_MS = 7 * 24 * 60 * 60 * 1000;

export function clientSecretsRouter(knex: Knex): Router {
  const r = Router();

  r.post('/clients/:clientId/secrets', async (req, res) => {
    const secret = randomSecret();
    const secretHash = await hashSecret(secret);
    const outcome = await knex.transaction(async (trx) => {
      // Concurrent rotations of one client queue on its row, so at most one next secret can exist.
      const client = await trx('clients').where('id', req.params.clientId).forUpdate().first('id', 'type');
      if (!client) return 'not_found' as const;
      if (client.type !== 'confidential') return 'public' as const;
      if (await trx('client_secrets').where({ client_id: client.id, state: 'next' }).first('id')) return 'pending' as const;
      await trx('client_secrets').where({ client_id: client.id, state: 'current' }).update({ expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS) });
      await trx('client_secrets').insert({ id: newId('key'), client_id: client.id, secret_hash: secretHash, state: 'next' });
      return 'created' as const;
    });
    if (outcome === 'not_found') return sendProblem(res, 'not_found');
    if (outcome === 'public') return sendProblem(res, 'schema_invalid', { message: 'a public client has no secret' });
    if (outcome === 'pending') return sendProblem(res, 'already_exists', { message: 'a next secret is already pending; promote it first' });
    res.status(201).json({ clientSecret: secret });
  });

  r.post('/clients/:clientId/secrets/promote', async (req, res) => {
    const outcome = await knex.transaction(async (trx) => {
      const client = await trx('clients').where('id', req.params.clientId).forUpdate().first('*');
      if (!client) return 'not_found' as const;
      const next = await trx('client_secrets').where({ client_id: client.id, state: 'next' }).first('id');
      if (!next) return 'nothing_pending' as const;
      await trx('client_secrets').where({ client_id: client.id, state: 'current' }).delete();
      await trx('client_secrets').where('id', next.id).update({ state: 'current', expires_at: null });
      return client;
    });
    if (outcome === 'not_found') return sendProblem(res, 'not_found');
    if (outcome === 'nothing_pending') return sendProblem(res, 'schema_invalid', { message: 'no next secret to promote' });
    res.json(clientView(outcome));
  });
  return r;
}
