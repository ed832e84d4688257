// oidc-provider's findAccount, from the request's shared reads (request-reads.ts) and the account facts (accounts.ts):
// its own module so that accounts.ts, which request-reads.ts builds on, does not depend back on it.
import type { Knex } from 'knex';
import type { Account, FindAccount } from 'oidc-provider';
import { hasRelationship, loginAccountOf } from './accounts.js';
import type { RequestReads } from './request-reads.js';

/**
 * oidc-provider's findAccount: `sub` is a personId. Called at authorization and at every token issuance; undefined
 * (→ invalid_grant at the token endpoint, a new login at authorization) when the person's login account is
 * disabled, the session was revoked, or the person no longer has a relationship with the client's tenant.
 */
export function accountFinder(knex: Knex, reads: RequestReads): FindAccount {
  return async (ctx, sub, token) => {
    const clientId = ctx.oidc.client?.clientId;
    if (token?.grantId) {
      // A code exchange or a refresh: one read of the grant's actor, the client's tenant and the relationship.
      const actor = clientId ? await reads.actorOfGrant(ctx, token.grantId, clientId) : undefined;
      if (!actor || actor.revoked || !actor.accountActive || actor.personId !== sub) return undefined;
      if (actor.tenantId && !actor.related) return undefined;
    } else {
      const tenantId = clientId ? await reads.tenantOfClient(ctx, clientId) : undefined;
      const account = await loginAccountOf(knex, sub, tenantId);
      if (!account || account.status !== 'active') return undefined;
      if (tenantId && !(await hasRelationship(knex, tenantId, sub))) return undefined;
    }
    const account: Account = { accountId: sub, claims: async () => ({ sub }) };
    return account;
  };
}
