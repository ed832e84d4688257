// Third-party apps as oidc-provider clients, read from the clients table on every lookup. oidc-provider caches the
// parsed client keyed by a hash of this metadata, so a disabled client is refused at its next request.
import type { Knex } from 'knex';
import type { ClientAuthMethod, ClientMetadata } from 'oidc-provider';
import { digestSecret, isScryptHash, verifySecret } from '../common/secrets.js';
import { fixedStatement } from '../common/db.js';

export interface ClientOptions {
  clientCredentials: boolean;
}

/**
 * The secrets a client may authenticate with at `at`: the current one and, during a rotation, the next one; a secret
 * past its expires_at (the old one after the overlap) no longer counts.
 */
const usableSecrets = (knex: Knex, clientId: string | Knex.Raw, at: Date | Knex.Raw) =>
  knex('client_secrets')
    .where('client_id', clientId)
    .whereIn('state', ['current', 'next'])
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', at));

/** Separates the stored secrets carried in a client's metadata (digests and old scrypt hashes have no spaces). */
const SECRETS_SEPARATOR = ' ';
/** A confidential client with no usable secret still needs a client_secret for oidc-provider; it matches nothing. */
const NO_USABLE_SECRET = 'none';

/** An active third-party client of an active tenant, with the stored forms of its usable secrets. */
interface ActiveClientRow {
  id: string;
  name: string;
  type: string;
  redirect_uris: string[];
  secrets: string;
  token_endpoint_auth_method: string | null;
  jwks: { keys: object[] } | null;
  dpop_bound_access_tokens: boolean;
  require_pushed_authorization_requests: boolean;
  security_profile: string | null;
}
const activeClient = fixedStatement<[string], ActiveClientRow>((knex, clientId) => {
  const secrets = usableSecrets(knex, knex.raw('??', ['c.id']), knex.fn.now())
    .select(knex.raw(`coalesce(string_agg(secret_hash, '${SECRETS_SEPARATOR}'), '')`))
    .as('secrets');
  return knex('clients as c')
    .join('tenants as t', 't.id', 'c.tenant_id')
    .where({ 'c.id': clientId, 'c.kind': 'third_party', 'c.status': 'active', 't.status': 'active' })
    .first(
      'c.id',
      'c.name',
      'c.type',
      'c.redirect_uris',
      'c.token_endpoint_auth_method',
      'c.jwks',
      'c.dpop_bound_access_tokens',
      'c.require_pushed_authorization_requests',
      'c.security_profile',
      secrets,
    );
});

/**
 * The app's sender-constraint and authentication settings as oidc-provider client metadata (issue 49). Absent
 * settings add nothing, so an app registered without them loads exactly as before. `security_profile` is read by
 * provider.ts (features.fapi.profile) to apply the FAPI 2.0 profile to this app only.
 */
function securityMetadata(row: ActiveClientRow, confidential: boolean): Omit<ClientMetadata, 'client_id'> {
  const method = (
    confidential ? (row.token_endpoint_auth_method ?? 'client_secret_basic') : 'none'
  ) as ClientAuthMethod;
  const keyAuth = method === 'private_key_jwt';
  return {
    token_endpoint_auth_method: method,
    ...(keyAuth && row.jwks ? { jwks: row.jwks as ClientMetadata['jwks'] } : {}),
    ...(row.dpop_bound_access_tokens && { dpop_bound_access_tokens: true }),
    ...(row.require_pushed_authorization_requests && { require_pushed_authorization_requests: true }),
    ...(row.security_profile && { security_profile: row.security_profile }),
  };
}

/**
 * Metadata of an active third-party client whose tenant is active; anything else is unknown to the issuer
 * (→ invalid_client). A suspended tenant is refused at issuance too (contract §3 "denied at issuance").
 * A confidential client's `client_secret` is the stored form of its usable secrets, read in the same statement, so
 * authenticating it costs no further read (compareClientSecret in provider.ts checks a presented secret against them).
 */
export async function findClientMetadata(
  knex: Knex,
  clientId: string,
  opts: ClientOptions,
): Promise<ClientMetadata | undefined> {
  const {
    rows: [row],
  } = await activeClient(knex, clientId);
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
    // A secret client is registered as basic (the default) or post; oidc-provider accepts either for both (contract
    // §5.8 allows both). A private_key_jwt client has no secret: it authenticates only with its registered keys.
    ...securityMetadata(row, confidential),
    ...(confidential && row.token_endpoint_auth_method !== 'private_key_jwt'
      ? { client_secret: row.secrets || NO_USABLE_SECRET }
      : {}),
  };
}

/** The stored secrets findClientMetadata put in a client's `client_secret`. */
export const storedSecretsOf = (clientSecret: string | undefined): string[] =>
  (clientSecret ?? '').split(SECRETS_SEPARATOR).filter((s) => s && s !== NO_USABLE_SECRET);

/**
 * True when `presented` matches one of `stored` (the client's usable secrets). Every one is checked (no early exit),
 * so the time taken does not depend on which matched. A match against a secret stored with scrypt before issue 32
 * re-stores it as its digest, only if the row still holds that hash (a rotation in between wins).
 */
export async function matchesStoredSecret(
  knex: Knex,
  clientId: string,
  presented: string,
  stored: readonly string[],
): Promise<boolean> {
  let match = false;
  for (const hash of stored) {
    if (!(await verifySecret(presented, hash))) continue;
    match = true;
    if (isScryptHash(hash))
      await knex('client_secrets')
        .where({ client_id: clientId, secret_hash: hash })
        .update({ secret_hash: digestSecret(presented) });
  }
  return match;
}

/**
 * True when `presented` matches one of the client's usable secrets at `now` (injectable so tests can check the 7-day
 * window without waiting).
 */
export async function clientSecretMatches(
  knex: Knex,
  clientId: string,
  presented: string,
  now = new Date(),
): Promise<boolean> {
  const stored: string[] = await usableSecrets(knex, clientId, now).pluck('secret_hash');
  return matchesStoredSecret(knex, clientId, presented, stored);
}
