// "May this origin call?": one rule for the gateway's cors plugin and the issuer's token and revocation endpoints.
// An origin belongs to a browser app when an active public third-party client of an active tenant registered it in
// its allowedOrigins. Only public clients: a browser cannot keep a secret, so confidential, first-party and internal
// clients never get CORS. When the request names a client (the token's client_id at the gateway, the form's client_id
// at the token endpoint), the origin must be that client's; a preflight names none, so any browser app's will do.
import type { Knex } from 'knex';

export async function isBrowserAppOrigin(knex: Knex, origin: string, clientId?: string): Promise<boolean> {
  const apps = knex('clients as c')
    .join('tenants as t', 't.id', 'c.tenant_id')
    .where({ 'c.kind': 'third_party', 'c.type': 'public', 'c.status': 'active', 't.status': 'active' })
    .whereRaw('c.allowed_origins @> ?::jsonb', [JSON.stringify([origin])]);
  return Boolean(await (clientId === undefined ? apps : apps.where('c.id', clientId)).first('c.id'));
}
