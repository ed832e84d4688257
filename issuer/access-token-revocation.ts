// RFC 7009 for this issuer's JWT access tokens. oidc-provider revokes refresh tokens itself (and with them the grant),
// but refuses structured tokens at its revocation endpoint (`unsupported_token_type`): a JWT access token is not
// stored, so it cannot look one up. platform-interfaces.md wants an access token's revocation to end its whole family,
// like its refresh token's. This post-middleware takes over exactly that refusal, after oidc-provider has
// authenticated the client: a token this issuer signed for that client ends its family (grant rows deleted, session
// revoked, so the PDP answers 403 subject_revoked); anything else (another client's token, a foreign or expired
// signature, a workload token without a family) is answered 200 with no effect, as RFC 7009 §2.2 asks.
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import type { Knex } from 'knex';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { killFamily } from '../common/sessions.js';
import { API_AUDIENCE } from './scope-policy.js';
import { routeOf } from './oidc-route.js';

export function accessTokenRevocation(knex: Knex, issuer: string, privateKeys: JWK[]) {
  const keySet = createLocalJWKSet({ keys: privateKeys.map(({ d: _d, ...pub }) => pub) });

  /** The family (grant id) of an access token this issuer signed for `clientId`, if it has one and is unexpired. */
  async function familyOf(token: string, clientId: string): Promise<string | undefined> {
    try {
      const { payload } = await jwtVerify(token, keySet, {
        issuer,
        audience: API_AUDIENCE,
        typ: 'at+jwt',
        algorithms: ['ES256'],
      });
      return payload.client_id === clientId && typeof payload.sid === 'string' ? payload.sid : undefined;
    } catch {
      return undefined;
    }
  }

  return async (ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> => {
    await next();
    if (routeOf(ctx) !== 'revocation' || ctx.status !== 400) return;
    const refused = (ctx.body as { error?: unknown } | undefined)?.error === 'unsupported_token_type';
    const client = ctx.oidc.client;
    if (!refused || !client) return;
    const family = await familyOf(String((ctx.oidc.params as { token?: unknown }).token ?? ''), client.clientId);
    if (family) await killFamily(knex, family);
    ctx.status = 200;
    ctx.body = '';
  };
}
