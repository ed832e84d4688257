// The access token's platform claims (platform-interfaces.md "Access token"), read from the database at each
// issuance so a token carries the account's current epoch and nothing is issued for a disabled account.
import {
  errors,
  type AccessToken,
  type ClientCredentials,
  type JWTStructured,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import type { RequestReads } from './request-reads.js';
import { noteCaller } from '../common/http.js';

interface IssuedToken {
  kind: string;
  clientId?: string | undefined;
  grantId?: string | undefined;
}

export const isClientCredentials = (ctx: KoaContextWithOIDC) =>
  (ctx.oidc.params as { grant_type?: unknown } | undefined)?.grant_type === 'client_credentials';

/**
 * extraTokenClaims: profile, tenant_id, actor_account_id, actor_epoch. oidc-provider spreads these before its own
 * claims, so they can never override iss, sub, aud, scope, client_id, exp or jti (`sub` is set by the customizer).
 * `self` tokens act as the person's login account behind the grant; `workload` tokens as the client's service account.
 */
export function platformClaims(reads: RequestReads) {
  return async (ctx: KoaContextWithOIDC, token: IssuedToken): Promise<Record<string, unknown>> => {
    if (token.kind === 'ClientCredentials' && token.clientId) {
      const account = await reads.activeServiceAccountOf(ctx, token.clientId);
      if (!account) throw new errors.InvalidGrant('this client has no active service account');
      noteCaller(ctx.res, { tenant: account.tenantId });
      return {
        profile: 'workload',
        tenant_id: account.tenantId,
        actor_account_id: account.id,
        actor_epoch: account.epoch,
      };
    }
    if (token.kind !== 'AccessToken' || !token.grantId || !token.clientId)
      throw new errors.InvalidGrant('cannot issue this token');
    const actor = await reads.actorOfGrant(ctx, token.grantId, token.clientId);
    const tenantId = actor?.tenantId;
    if (!actor || !tenantId) throw new errors.InvalidGrant('authorization no longer valid');
    noteCaller(ctx.res, { tenant: tenantId });
    return { profile: 'self', tenant_id: tenantId, actor_account_id: actor.accountId, actor_epoch: actor.epoch };
  };
}

/**
 * formats.customizers.jwt. Self tokens: `sid` is the grant id (the sessions row the PDP checks for revocation), not
 * the browser session id. Workload tokens: `sub` is the service account, not the client oidc-provider would put.
 */
export async function setSubjectClaims(
  _ctx: KoaContextWithOIDC,
  token: AccessToken | ClientCredentials,
  jwt: JWTStructured,
): Promise<void> {
  if ('grantId' in token && token.grantId) jwt.payload.sid = token.grantId;
  if (token.kind === 'ClientCredentials') jwt.payload.sub = jwt.payload.actor_account_id;
}
