// Facts the issuer reads several times while answering one request: findAccount, the token's claims and the scope
// checks each need the grant's actor, the client's tenant, the client's capabilities or its service account (a refresh
// or a client_credentials grant asked for each twice). Each is read once per request, keyed by the request's context object: nothing outlives the request, and
// every request reads the database afresh.
import type { Knex } from 'knex';
import type { Capability } from '../wire/decision.js';
import { actorOfGrant, tenantOfClient, type SessionActor } from './accounts.js';
import { allowedCapabilities } from './scope-policy.js';
import { activeServiceAccountOf, type ServiceAccount } from './service-accounts.js';

function oncePerRequest<A extends string[], R>(
  read: (...args: A) => Promise<R>,
): (ctx: object, ...args: A) => Promise<R> {
  const byRequest = new WeakMap<object, Map<string, Promise<R>>>();
  return (ctx, ...args) => {
    let reads = byRequest.get(ctx);
    if (!reads) byRequest.set(ctx, (reads = new Map()));
    const key = args.join('\n');
    let result = reads.get(key);
    if (!result) reads.set(key, (result = read(...args)));
    return result;
  };
}

export interface RequestReads {
  /** The grant's actor, with the tenant of `clientId` and the person's relationship to it (accounts.ts). */
  actorOfGrant(ctx: object, grantId: string, clientId: string): Promise<SessionActor | undefined>;
  tenantOfClient(ctx: object, clientId: string): Promise<string | undefined>;
  allowedCapabilities(ctx: object, clientId: string): Promise<Capability[]>;
  /** A workload token's subject: the client's active service account (service-accounts.ts). */
  activeServiceAccountOf(ctx: object, clientId: string): Promise<ServiceAccount | undefined>;
}

export const requestReads = (knex: Knex): RequestReads => ({
  actorOfGrant: oncePerRequest((grantId: string, clientId: string) => actorOfGrant(knex, grantId, clientId)),
  tenantOfClient: oncePerRequest((clientId: string) => tenantOfClient(knex, clientId)),
  allowedCapabilities: oncePerRequest((clientId: string) => allowedCapabilities(knex, clientId)),
  activeServiceAccountOf: oncePerRequest((clientId: string) => activeServiceAccountOf(knex, clientId)),
});
