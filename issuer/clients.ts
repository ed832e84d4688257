// Third-party apps as oidc-provider clients, read from the clients table on every lookup. oidc-provider caches the
// parsed client keyed by a hash of this metadata, so a disabled client is refused at its next request.
import type { Knex } from 'knex';
import type { ClientMetadata } from 'oidc-provider';
import { verifySecret } from '../common/secrets.js';
import { runPrepared } from '../common/db.js';

/**
 * Stands in for client_secret in the metadata of confidential clients: oidc-provider needs a value to accept the
 * client_secret_* methods, but the real check is compareClientSecret against the stored hashes (see below).
 */
const HASHED_SECRET_PLACEHOLDER = 'secret-is-checked-against-client_secrets-hashes';

export interface ClientOptions {
  clientCredentials: boolean;
}

/**
 * Metadata of an active third-party client whose tenant is active; anything else is unknown to the issuer
 * (→ invalid_client). A suspended tenant is refused at issuance too (contract §3 "denied at issuance").
 */
export async function findClientMetadata(
  knex: Knex,
  clientId: string,
  opts: ClientOptions,
): Promise<ClientMetadata | undefined> {
  const {
    rows: [row],
  } = await runPrepared<{ id: string; name: string; type: string; redirect_uris: string[] }>(
    knex,
    knex('clients as c')
      .join('tenants as t', 't.id', 'c.tenant_id')
      .where({ 'c.id': clientId, 'c.kind': 'third_party', 'c.status': 'active', 't.status': 'active' })
      .first('c.id', 'c.name', 'c.type', 'c.redirect_uris'),
  );
  if (!row) return undefined;
  const confidential = row.type === 'confidential';
  const grantTypes = ['authorization_code', 'refresh_token'];
  // oidc-provider refuses to load a client listing a grant it has not enabled, so only list it with the flag on.
  if (confidential && opts.clientCredentials) grantTypes.push('client_credentials');
  return {
    client_id: row.id,
    client_name: row.name,
    redirect_uris: row.redirect_uris as string[],
    grant_types: grantTypes,
    response_types: ['code'],
    // Registered as basic; oidc-provider accepts client_secret_post for it as well (contract §5.8 allows both).
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    ...(confidential ? { client_secret: HASHED_SECRET_PLACEHOLDER } : {}),
  };
}

/**
 * True when `presented` matches one of the client's usable secrets: the current one and, during a rotation, the
 * next one; a secret past its expires_at (the old one after the overlap) no longer counts. `now` is injectable so
 * tests can check the 7-day window without waiting.
 */
export async function clientSecretMatches(
  knex: Knex,
  clientId: string,
  presented: string,
  now = new Date(),
): Promise<boolean> {
  const rows: { secret_hash: string }[] = await knex('client_secrets')
    .where('client_id', clientId)
    .whereIn('state', ['current', 'next'])
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
    .select('secret_hash');
  let match = false;
  // Check every row (no early exit) so the time taken does not depend on which secret matched.
  for (const { secret_hash } of rows) if (await verifySecret(presented, secret_hash)) match = true;
  return match;
}
