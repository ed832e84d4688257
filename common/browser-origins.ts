// "May this origin call?": one rule for the gateway's cors plugin and the issuer's token and revocation endpoints.
// An origin belongs to a browser app when an active public third-party client registered it in its allowedOrigins.
// Only public clients: a browser cannot keep a secret, so confidential, first-party and internal clients never get
// CORS. The tenant's status is not part of it: a suspended tenant's browser app must still be able to read its 403
// `tenant_suspended` (CORS only decides who may read an answer; the PDP decides what the answer is). When the request
// names a client (the token's client_id at the gateway, the form's client_id at the token endpoint), the origin must
// be that client's; a preflight names none, so any browser app's will do.
import type { Knex } from 'knex';

export async function isBrowserAppOrigin(knex: Knex, origin: string, clientId?: string): Promise<boolean> {
  const apps = knex('clients')
    .where({ kind: 'third_party', type: 'public', status: 'active' })
    .whereRaw('allowed_origins @> ?::jsonb', [JSON.stringify([origin])]);
  return Boolean(await (clientId === undefined ? apps : apps.where('id', clientId)).first('id'));
}
