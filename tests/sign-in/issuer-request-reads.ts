// The issuer's reads of one token request (issuer/request-reads.ts): a refresh reads the grant's actor and a
// client_credentials grant the service account, each with the client's capabilities in the same statement, so the
// capabilities cost no statement of their own; the answers are those of the separate reads, and a row that is missing
// still leaves the capabilities right. Counted on the pool's connections, as the statements reach the database.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { System } from '../../infra/system.js';
import { requestReads } from '../../issuer/request-reads.js';
import { allowedCapabilities } from '../../issuer/scope-policy.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupMachineClient, setupTenant } from '../support/admin.js';

describe('issuer-request-reads', () => {
  let system: System;
  beforeAll(async () => {
    system = await startTestSystem();
  });
  afterAll(async () => {
    await system?.close();
  });

  /** `knex` whose pooled connections note every statement they are sent (the issuer's reads are prepared statements). */
  function notingKnex(knex: Knex): { knex: Knex; sent: string[] } {
    const sent: string[] = [];
    const pool = knex.client as unknown as {
      acquireConnection(): Promise<{ query(q: { text: string }): Promise<unknown> }>;
      releaseConnection(c: unknown): Promise<void>;
    };
    // Callable like knex (the reads build their queries with it), and knex for everything else but its pool.
    const noting = ((...args: Parameters<Knex>) => knex(...args)) as unknown as Knex;
    Object.setPrototypeOf(noting, knex);
    Object.defineProperty(noting, 'client', {
      value: Object.assign(Object.create(knex.client as object) as object, {
        acquireConnection: async () => {
          const connection = await pool.acquireConnection();
          return {
            query: (q: { text: string }) => (sent.push(q.text), connection.query(q)),
            connection,
          };
        },
        releaseConnection: (c: { connection: unknown }) => pool.releaseConnection(c.connection),
      }),
    });
    return { knex: noting, sent };
  }

  const GRANT = ['svc.profile.self.read', 'svc.tenant.info.read'];

  describe("a token request's reads", () => {
    it('reads the service account and the capabilities of a client_credentials grant in one statement', async () => {
      const app = await setupMachineClient(adminClient(system), { grant: GRANT, capabilities: GRANT.slice(0, 1) });
      const { knex, sent } = notingKnex(system.db.knex);
      const reads = requestReads(knex);
      const ctx = {};
      const [account, allowed] = await Promise.all([
        reads.activeServiceAccountOf(ctx, app.clientId),
        reads.allowedCapabilities(ctx, app.clientId),
      ]);
      expect(sent).toHaveLength(1);
      expect(account).toMatchObject({ id: app.serviceAccountId, capabilities: GRANT.slice(0, 1) });
      expect(allowed).toEqual(await allowedCapabilities(system.db.knex, app.clientId));
      expect(allowed).toEqual(GRANT);
      // Another request reads afresh.
      await reads.allowedCapabilities({}, app.clientId);
      expect(sent).toHaveLength(2);
    });

    it("reads a grant's actor and the client's capabilities in one statement, whichever is asked first", async () => {
      const app = await setupTenant(adminClient(system), { capabilities: GRANT });
      const grantId = randomUUID();
      await system.db.knex('sessions').insert({ id: grantId, account_id: app.accountId, client_id: app.clientId });
      const { knex, sent } = notingKnex(system.db.knex);
      const reads = requestReads(knex);

      const refresh = {};
      const actor = await reads.actorOfGrant(refresh, grantId, app.clientId);
      expect(actor).toMatchObject({ personId: app.personId, tenantId: app.tenantId, related: true, revoked: false });
      expect(await reads.allowedCapabilities(refresh, app.clientId)).toEqual(GRANT);
      expect(sent).toHaveLength(1);

      // Capabilities asked first: they are read on their own, and the actor's read does not replace them.
      const other = {};
      expect(await reads.allowedCapabilities(other, app.clientId)).toEqual(GRANT);
      await reads.actorOfGrant(other, grantId, app.clientId);
      expect(await reads.allowedCapabilities(other, app.clientId)).toEqual(GRANT);
      expect(sent).toHaveLength(3);
    });

    it('reads the capabilities on their own when the grant has no session', async () => {
      const app = await setupTenant(adminClient(system), { capabilities: GRANT });
      const { knex, sent } = notingKnex(system.db.knex);
      const reads = requestReads(knex);
      const ctx = {};
      expect(await reads.actorOfGrant(ctx, randomUUID(), app.clientId)).toBeUndefined();
      expect(await reads.allowedCapabilities(ctx, app.clientId)).toEqual(GRANT);
      expect(sent).toHaveLength(2);
    });
  });
});
