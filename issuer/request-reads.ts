// Facts the issuer reads several times while answering one request: findAccount, the token's claims and the scope
// checks each need the grant's actor, the client's tenant, the client's capabilities or its service account (a refresh
// or a client_credentials grant asked for each twice). Each is read once per request, keyed by the request's context
// object: nothing outlives the request, and every request reads the database afresh. The grant's actor and the service
// account come with the client's capabilities from the same statement, so a refresh or a client_credentials grant that
// reads one of them first does not read the capabilities again.
import type { Knex } from 'knex';
import type { Capability } from '../wire/decision.js';
import { actorOfGrant, tenantOfClient, type SessionActor } from './accounts.js';
import { allowedCapabilities } from './scope-policy.js';
import { activeServiceAccountOf, type ServiceAccount } from './service-accounts.js';

export interface RequestReads {
  /** The grant's actor, with the tenant of `clientId` and the person's relationship to it (accounts.ts). */
  actorOfGrant(ctx: object, grantId: string, clientId: string): Promise<SessionActor | undefined>;
  tenantOfClient(ctx: object, clientId: string): Promise<string | undefined>;
  allowedCapabilities(ctx: object, clientId: string): Promise<Capability[]>;
  /** A workload token's subject: the client's active service account (service-accounts.ts). */
  activeServiceAccountOf(ctx: object, clientId: string): Promise<ServiceAccount | undefined>;
}

export function requestReads(knex: Knex): RequestReads {
  const byRequest = new WeakMap<object, Map<string, Promise<unknown>>>();
  /** The request's read under `key`, started by `read` if it is the first. */
  const once = <R>(ctx: object, key: string, read: () => Promise<R>): Promise<R> => {
    let reads = byRequest.get(ctx);
    if (!reads) byRequest.set(ctx, (reads = new Map()));
    let result = reads.get(key) as Promise<R> | undefined;
    if (!result) reads.set(key, (result = read()));
    return result;
  };
  const allowedKey = (clientId: string) => `allowed\n${clientId}`;
  /**
   * A read that also brings the client's capabilities: they become the request's allowedCapabilities unless it read
   * them already (read on their own if the row is missing).
   */
  const withCapabilities = <R extends { clientAllows: Capability[] }>(
    ctx: object,
    clientId: string,
    read: Promise<R | undefined>,
  ): Promise<R | undefined> => {
    void once(ctx, allowedKey(clientId), () =>
      read.then((row) => row?.clientAllows ?? allowedCapabilities(knex, clientId)),
    ).catch(() => undefined); // a failed read is reported by whoever awaits it
    return read;
  };
  return {
    actorOfGrant: (ctx, grantId, clientId) =>
      once(ctx, `actor\n${grantId}\n${clientId}`, () =>
        withCapabilities(ctx, clientId, actorOfGrant(knex, grantId, clientId)),
      ),
    tenantOfClient: (ctx, clientId) => once(ctx, `tenant\n${clientId}`, () => tenantOfClient(knex, clientId)),
    allowedCapabilities: (ctx, clientId) => once(ctx, allowedKey(clientId), () => allowedCapabilities(knex, clientId)),
    activeServiceAccountOf: (ctx, clientId) =>
      once(ctx, `account\n${clientId}`, () => withCapabilities(ctx, clientId, activeServiceAccountOf(knex, clientId))),
  };
}
