// Facts the issuer reads several times while answering one request: findAccount, the token's claims and the scope
// checks each need the grant's actor, the client's tenant or the client's capabilities (a refresh asked for each
// twice). Each is read once per request, keyed by the request's context object: nothing outlives the request, and
// every request reads the database afresh.
import type { Knex } from 'knex';
import type { Capability } from '../wire/decision.js';
import { actorOfGrant, tenantOfClient, type SessionActor } from './accounts.js';
import { allowedCapabilities } from './scope-policy.js';

function oncePerRequest<R>(read: (key: string) => Promise<R>): (ctx: object, key: string) => Promise<R> {
  const byRequest = new WeakMap<object, Map<string, Promise<R>>>();
  return (ctx, key) => {
    let reads = byRequest.get(ctx);
    if (!reads) byRequest.set(ctx, (reads = new Map()));
    let result = reads.get(key);
    if (!result) reads.set(key, (result = read(key)));
    return result;
  };
}

export interface RequestReads {
  actorOfGrant(ctx: object, grantId: string): Promise<SessionActor | undefined>;
  tenantOfClient(ctx: object, clientId: string): Promise<string | undefined>;
  allowedCapabilities(ctx: object, clientId: string): Promise<Capability[]>;
}

export const requestReads = (knex: Knex): RequestReads => ({
  actorOfGrant: oncePerRequest((grantId) => actorOfGrant(knex, grantId)),
  tenantOfClient: oncePerRequest((clientId) => tenantOfClient(knex, clientId)),
  allowedCapabilities: oncePerRequest((clientId) => allowedCapabilities(knex, clientId)),
});
