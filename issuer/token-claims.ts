// The access token's platform claims (platform-interfaces.md "Access token"), read from the database at each
// issuance so a refreshed token carries the account's current epoch.
import type { Knex } from 'knex';
import { errors, type AccessToken, type ClientCredentials, type JWTStructured, type KoaContextWithOIDC } from 'oidc-provider';
import { actorOfGrant, tenantOfClient } from './accounts.js';

interface IssuedToken {
  kind: string;
  clientId?: string | undefined;
  grantId?: string | undefined;
}

/**
 * extraTokenClaims: profile, tenant_id, actor_account_id, actor_epoch. oidc-provider spreads these before its own
 * claims, so they can never override iss, sub, aud, scope, client_id, exp or jti.
 */
export function platformClaims(knex: Knex) {
  return async (_ctx: KoaContextWithOIDC, token: IssuedToken): Promise<Record<string, unknown>> => {
    if (token.kind !== 'AccessToken' || !token.grantId || !token.clientId) {
      // client_credentials (workload tokens) is not implemented yet; refuse rather than mint a token without them.
      throw new errors.UnsupportedGrantType('grant type not supported');
    }
    const [actor, tenantId] = await Promise.all([actorOfGrant(knex, token.grantId), tenantOfClient(knex, token.clientId)]);
    if (!actor || !tenantId) throw new errors.InvalidGrant('authorization no longer valid');
    return { profile: 'self', tenant_id: tenantId, actor_account_id: actor.accountId, actor_epoch: actor.epoch };
  };
}

/**
 * formats.customizers.jwt: `sid` is the grant id (the sessions row the PDP checks for revocation), not the browser
 * session id oidc-provider would otherwise know the token by.
 */
export async function addSessionId(_ctx: KoaContextWithOIDC, token: AccessToken | ClientCredentials, jwt: JWTStructured): Promise<void> {
  if ('grantId' in token && token.grantId) jwt.payload.sid = token.grantId;
}
