// The PDP decides from facts it keeps in memory, valid up to the database's revision, which it learns on every batch
// from the revision feed its writers publish to, or reads from the database when the feed cannot vouch (issue 33,
// policies/store.ts, common/revision-feed.ts, migrations 011 and 013). What must hold: no decision asked for after a change was acknowledged
// uses the state before it. Every kind of change that can alter a decision is made while decisions are asked in
// loops, through the writer that makes it in production (admin API, the issuer's session functions, SQL where no API
// changes it); every call sent after the change's answer arrived must get the decision the database gives after it.
// Once in one process (both databases, whichever this run uses; the feed in memory or in Redis), once with two PDP
// processes on one PostgreSQL and one Redis feed: the change through one, the decisions from the other, which never saw
// it happen.
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import type { Knex } from 'knex';
import { performance } from 'node:perf_hooks';
import { openDatabase, type Database } from '../../common/db.js';
import { killFamily } from '../../common/sessions.js';
import { randomSecret } from '../../common/secrets.js';
import type { System } from '../../infra/system.js';
import { evaluate } from '../../policies/evaluate.js';
import { FactCache } from '../../policies/fact-cache.js';
import { knexPolicyStore } from '../../policies/store.js';
import { FEED_TRUST_MS, openRevisionFeed, redisFeed, type RevisionFeed } from '../../common/revision-feed.js';
import { connectRedis, type RedisClient } from '../../common/rate-limit-store.js';
import { createLogger } from '../../common/log.js';
import { DECISION_PATH, type DecisionInput } from '../../wire/decision.js';
import { adminClient, createPerson, setupMachineClient, setupTenant, type AdminClient } from '../support/admin.js';
import { scratchDatabase } from '../support/database.js';
import { Child, freePorts, nodeEntry, privatePostgres, waitFor } from '../support/processes.js';
import { startTestSystem } from '../support/system.js';

describe('pdp-fact-revisions', () => {
  const INTERNAL_SECRET = randomSecret();
  const silent = createLogger('test', 'silent');

  /** Where decisions are asked, where changes are made, and the database both use. */
  interface Target {
    decisionUrl: string;
    admin: AdminClient;
    knex: Knex;
  }

  /** One decision, as a comparable string: the deny code, or the allow with what it carries. */
  async function decide(url: string, input: DecisionInput): Promise<string> {
    const res = await fetch(`${url}${DECISION_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-internal-secret': INTERNAL_SECRET },
      body: JSON.stringify(input),
    });
    const d = (await res.json()) as Record<string, any>;
    if (res.status !== 200) return `${res.status} ${d.error}`;
    return d.allow ? `allow ${d.effectiveScopes.join(',')} ${JSON.stringify(d.rateLimit)}` : d.code;
  }

  /** The decision the database gives now, read afresh by a store that keeps nothing, and decided as the PDP does. */
  async function uncached(target: Target, input: DecisionInput): Promise<string> {
    const d = evaluate(input, await knexPolicyStore(target.knex, { maxFacts: 0 }).facts(input));
    return d.allow ? `allow ${d.effectiveScopes.join(',')} ${JSON.stringify(d.rateLimit)}` : d.code;
  }

  const LOOPERS = 4;
  /** Calls each looper sends after the change's answer arrived. */
  const CALLS_AFTER = 20;

  /**
   * Asks for `input` in LOOPERS loops, makes the change once every loop has an answer, and goes on until each loop has
   * sent CALLS_AFTER calls after the change's answer arrived. Returns the answers received before the change began and
   * those of the calls sent after it was acknowledged.
   */
  async function underLoad(target: Target, input: DecisionInput, change: () => Promise<unknown>) {
    const calls: { sentAt: number; answeredAt: number; outcome: string }[] = [];
    let acknowledgedAt = Infinity;
    let answered = 0;
    let allAnswered!: () => void;
    const warm = new Promise<void>((ok) => (allAnswered = ok));
    const loop = async () => {
      for (let after = 0, first = true; after < CALLS_AFTER;) {
        const sentAt = performance.now();
        const outcome = await decide(target.decisionUrl, input);
        calls.push({ sentAt, answeredAt: performance.now(), outcome });
        if (sentAt > acknowledgedAt) after++;
        if (first && ++answered === LOOPERS) allAnswered();
        first = false;
      }
    };
    const loops = Array.from({ length: LOOPERS }, loop);
    await warm;
    const startedAt = performance.now();
    await change();
    acknowledgedAt = performance.now();
    await Promise.all(loops);
    return {
      before: calls.filter((c) => c.answeredAt < startedAt).map((c) => c.outcome),
      after: calls.filter((c) => c.sentAt > acknowledgedAt).map((c) => c.outcome),
    };
  }

  const selfInput = (
    t: { tenantId: string; clientId: string; personId: string; accountId: string },
    sid: string,
    over: Partial<DecisionInput> = {},
  ): DecisionInput => ({
    requestId: 'r-revisions',
    token: {
      sub: t.personId,
      client_id: t.clientId,
      tenant_id: t.tenantId,
      profile: 'self',
      scope: 'svc.profile.self.read svc.tenant.info.read svc.person.read',
      actor_account_id: t.accountId,
      actor_epoch: 1,
      sid,
    },
    capability: 'svc.profile.self.read',
    resource: { type: 'self' },
    ...over,
  });

  let sessions = 0;
  /** A consented authorization, inserted as the issuer's consent inserts it (issuer/interactions.ts). */
  const consent = (knex: Knex, sid: string, t: { accountId: string; clientId: string }) =>
    knex('sessions').insert({ id: sid, account_id: t.accountId, client_id: t.clientId });

  interface Scenario {
    name: string;
    /** The decision before the change, then after it (each a prefix of the outcome string). */
    from: string;
    to: string;
    /** Builds the data; returns the input and the change. */
    arrange(target: Target): Promise<{ input: DecisionInput; change(): Promise<unknown> }>;
  }

  /** A tenant with a consented session of its person through its app; the grant as given. */
  async function selfSetup(target: Target, capabilities?: string[], plan?: 'L1' | 'L2') {
    const t = await setupTenant(target.admin, { ...(capabilities && { capabilities }), ...(plan && { plan }) });
    const sid = `sid-revisions-${process.pid}-${++sessions}`;
    await consent(target.knex, sid, t);
    return { t, sid, input: selfInput(t, sid) };
  }

  const ok = async (call: Promise<{ status: number; body: unknown }>) => {
    const res = await call;
    if (res.status >= 300) throw new Error(`change refused: ${res.status} ${JSON.stringify(res.body)}`);
    return res;
  };

  const SCENARIOS: Scenario[] = [
    {
      name: 'a grant withdrawn (admin API)',
      from: 'allow',
      to: 'capability_not_granted',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        const put = { capabilities: ['svc.tenant.info.read'] };
        return {
          input,
          change: () => ok(target.admin.call('PUT', `/tenants/${t.tenantId}/grants/${t.clientId}`, put)),
        };
      },
    },
    {
      name: 'a grant given (admin API): a denial held in memory is not kept either',
      from: 'capability_not_granted',
      to: 'allow',
      async arrange(target) {
        const { t, input } = await selfSetup(target, ['svc.tenant.info.read']);
        const put = { capabilities: ['svc.tenant.info.read', 'svc.profile.self.read'] };
        return {
          input,
          change: () => ok(target.admin.call('PUT', `/tenants/${t.tenantId}/grants/${t.clientId}`, put)),
        };
      },
    },
    {
      name: 'a client disabled (admin API)',
      from: 'allow',
      to: 'client_disabled',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        return {
          input,
          change: () => ok(target.admin.call('PATCH', `/clients/${t.clientId}`, { status: 'disabled' })),
        };
      },
    },
    {
      name: 'a client deleted (admin API)',
      from: 'allow',
      to: 'client_unknown',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        return { input, change: () => ok(target.admin.call('DELETE', `/clients/${t.clientId}`)) };
      },
    },
    {
      name: 'a tenant suspended (admin API)',
      from: 'allow',
      to: 'tenant_suspended',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        return {
          input,
          change: () => ok(target.admin.call('PATCH', `/tenants/${t.tenantId}`, { status: 'suspended' })),
        };
      },
    },
    {
      name: "a tenant's plan lowered (admin API)",
      from: 'allow',
      to: 'plan_capability_excluded',
      async arrange(target) {
        const { t, sid } = await selfSetup(target, ['svc.person.read']);
        const input = selfInput(t, sid, {
          capability: 'svc.person.read',
          resource: { type: 'person', personId: t.personId },
        });
        return { input, change: () => ok(target.admin.call('PATCH', `/tenants/${t.tenantId}`, { plan: 'L1' })) };
      },
    },
    {
      name: "a tenant's rate limits changed (admin API): the allow carries the new ones",
      from: 'allow svc.profile.self.read {"tenant":{"points":3000',
      to: 'allow svc.profile.self.read {"tenant":{"points":77',
      async arrange(target) {
        const { t, input } = await selfSetup(target, ['svc.profile.self.read']);
        input.token.scope = 'svc.profile.self.read';
        const rateLimit = { tenant: { points: 77, durationS: 60 }, account: { points: 7, durationS: 60 } };
        return { input, change: () => ok(target.admin.call('PATCH', `/tenants/${t.tenantId}`, { rateLimit })) };
      },
    },
    {
      name: "a plan's level changed (SQL: no API changes it)",
      from: 'plan_capability_excluded',
      to: 'allow',
      async arrange(target) {
        const { t, sid } = await selfSetup(target, ['svc.person.read'], 'L1');
        const input = selfInput(t, sid, {
          capability: 'svc.person.read',
          resource: { type: 'person', personId: t.personId },
        });
        return { input, change: () => target.knex('plans').where({ id: 'L1' }).update({ level: 3 }) };
      },
    },
    {
      name: 'an account disabled (admin API)',
      from: 'allow',
      to: 'subject_revoked',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        return {
          input,
          change: () => ok(target.admin.call('PATCH', `/accounts/${t.accountId}`, { status: 'disabled' })),
        };
      },
    },
    {
      name: "an account's epoch advanced (admin API)",
      from: 'allow',
      to: 'epoch_changed',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        return { input, change: () => ok(target.admin.call('POST', `/accounts/${t.accountId}/epoch`)) };
      },
    },
    {
      name: "an account's sessions revoked (admin API, console)",
      from: 'allow',
      to: 'subject_revoked',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        return { input, change: () => ok(target.admin.call('POST', `/accounts/${t.accountId}/sessions/revoke`)) };
      },
    },
    {
      name: 'a token family killed (issuer: token revocation, refresh replay, connected-apps revoke)',
      from: 'allow',
      to: 'subject_revoked',
      async arrange(target) {
        const { sid, input } = await selfSetup(target);
        return { input, change: () => killFamily(target.knex, sid) };
      },
    },
    {
      name: "a consent given (issuer sign-in): the unknown session's denial is not kept",
      from: 'subject_revoked',
      to: 'allow',
      async arrange(target) {
        const t = await setupTenant(target.admin);
        const sid = `sid-revisions-${process.pid}-${++sessions}`;
        return { input: selfInput(t, sid), change: () => consent(target.knex, sid, t) };
      },
    },
    {
      name: "the subject's relationship with the tenant ended (admin API)",
      from: 'allow',
      to: 'subject_revoked',
      async arrange(target) {
        const { t, input } = await selfSetup(target);
        return { input, change: () => ok(target.admin.call('DELETE', `/tenants/${t.tenantId}/persons/${t.personId}`)) };
      },
    },
    {
      name: "an addressed person's relationship ended (admin API)",
      from: 'allow',
      to: 'no_relationship',
      async arrange(target) {
        const { t, sid } = await selfSetup(target, ['svc.person.read']);
        const other = await createPerson(target.admin, t.tenantId);
        const input = selfInput(t, sid, {
          capability: 'svc.person.read',
          resource: { type: 'person', personId: other },
        });
        return { input, change: () => ok(target.admin.call('DELETE', `/tenants/${t.tenantId}/persons/${other}`)) };
      },
    },
    {
      name: 'a capability closed on this deployment (admin API)',
      from: 'allow',
      to: 'capability_unavailable',
      async arrange(target) {
        const { input } = await selfSetup(target);
        input.capability = 'svc.tenant.info.read';
        input.resource = { type: 'tenant' };
        const close = { enabled: false };
        return { input, change: () => ok(target.admin.call('PATCH', '/capabilities/svc.tenant.info.read', close)) };
      },
    },
    {
      name: "a service account's capability taken away (SQL: no API changes it)",
      from: 'allow',
      to: 'capability_not_granted',
      async arrange(target) {
        const m = await setupMachineClient(target.admin, { grant: ['svc.tenant.info.read'] });
        const input = workloadInput(m);
        const taken = () =>
          target.knex('service_account_capabilities').where({ account_id: m.serviceAccountId }).delete();
        return { input, change: taken };
      },
    },
    {
      name: 'a service account disabled (admin API)',
      from: 'allow',
      to: 'subject_revoked',
      async arrange(target) {
        const m = await setupMachineClient(target.admin, { grant: ['svc.tenant.info.read'] });
        const disable = { status: 'disabled' };
        return {
          input: workloadInput(m),
          change: () => ok(target.admin.call('PATCH', `/accounts/${m.serviceAccountId}`, disable)),
        };
      },
    },
  ];

  function workloadInput(m: { tenantId: string; clientId: string; serviceAccountId: string }): DecisionInput {
    return {
      requestId: 'r-revisions',
      token: {
        sub: m.serviceAccountId,
        client_id: m.clientId,
        tenant_id: m.tenantId,
        profile: 'workload',
        scope: 'svc.tenant.info.read',
        actor_account_id: m.serviceAccountId,
        actor_epoch: 1,
      },
      capability: 'svc.tenant.info.read',
      resource: { type: 'tenant' },
    };
  }

  /** The global changes some scenarios make (the catalogue, a plan's level), undone after each. */
  async function undoGlobalChanges(knex: Knex): Promise<void> {
    await knex('capabilities').where({ id: 'svc.tenant.info.read' }).update({ enabled: true });
    await knex('plans').where({ id: 'L1' }).update({ level: 1 });
  }

  /** Every scenario against `target`: the answers before the change are the old decision, all after it the new one. */
  function changesUnderLoad(target: () => Target) {
    it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', async (_name, scenario) => {
      const t = target();
      const { input, change } = await scenario.arrange(t);
      try {
        const { before, after } = await underLoad(t, input, change);
        const decided = await uncached(t, input);
        expect(decided.startsWith(scenario.to)).toBe(true);
        expect(before.length).toBeGreaterThanOrEqual(LOOPERS);
        expect(before.filter((o) => !o.startsWith(scenario.from))).toEqual([]);
        expect(after.length).toBe(LOOPERS * CALLS_AFTER);
        expect(after.filter((o) => o !== decided)).toEqual([]);
      } finally {
        await undoGlobalChanges(t.knex);
      }
    });
  }

  /**
   * A policy store on the suite's database that notes the statements it sends, by name (with the inputs a fact read
   * carries): the real database behind a pool that notes what each connection is asked.
   */
  function notingStore(knex: Knex, feed?: RevisionFeed): { store: ReturnType<typeof knexPolicyStore>; sent: string[] } {
    const sent: string[] = [];
    const pool = knex.client as unknown as {
      acquireConnection(): Promise<{ query(q: { name?: string; values: unknown[][] }): Promise<unknown> }>;
      releaseConnection(c: unknown): Promise<void>;
    };
    const noting = {
      client: {
        acquireConnection: async () => {
          const connection = await pool.acquireConnection();
          return {
            query: (q: { name?: string; values: unknown[][] }) => {
              sent.push(q.name === 'pdp_fact_rows' ? `pdp_fact_rows of ${q.values[0]!.length}` : q.name!);
              return connection.query(q);
            },
            connection,
          };
        },
        releaseConnection: (c: { connection: unknown }) => pool.releaseConnection(c.connection),
      },
    } as unknown as Knex;
    return { store: knexPolicyStore(noting, { feed }), sent };
  }

  describe('decisions from memory, in one PDP, while each kind of change is made', () => {
    let system: System;
    beforeAll(async () => {
      system = await startTestSystem({ INTERNAL_SECRET });
    });
    afterAll(async () => {
      await system?.close();
    });
    const target = (): Target => ({ decisionUrl: system.pdpUrl, admin: adminClient(system), knex: system.db.knex });

    changesUnderLoad(target);

    it("notes no extension record write: no decision depends on an app's records (migration 012)", async () => {
      const { knex } = system.db;
      const t = await setupTenant(adminClient(system));
      await knex('extensions').insert({
        id: `ext_rev_${process.pid}`,
        tenant_id: t.tenantId,
        client_id: t.clientId,
        name: 'n',
      });
      const counter = () => knex('extension_record_counts').where({ extension_id: `ext_rev_${process.pid}` });
      const noted = async (write: () => Promise<unknown>) => {
        const before = Number((await knex('pdp_revision').first('revision')).revision);
        await write();
        return (await knex('pdp_changes').where('revision', '>', before).orderBy('revision')).map((c) => c.fact);
      };
      expect(
        await noted(() =>
          knex('extension_record_counts').insert({
            tenant_id: t.tenantId,
            extension_id: `ext_rev_${process.pid}`,
            records: 0,
          }),
        ),
      ).toEqual([]);
      // The first record written and the last deleted, which migration 011 noted as the app's fact.
      expect(await noted(() => counter().increment('records', 1))).toEqual([]);
      expect(await noted(() => counter().decrement('records', 1))).toEqual([]);
    });

    it(
      'advances the revision once per changed row, gives back the numbers of a rolled-back change, ' +
        'and forgets all on TRUNCATE',
      async () => {
        const { knex } = system.db;
        const revision = async () => Number((await knex('pdp_revision').first('revision')).revision);
        const t = await setupTenant(adminClient(system));
        const start = await revision();
        await knex('clients').where({ id: t.clientId }).update({ name: 'renamed' });
        await knex('tenant_grants').where({ tenant_id: t.tenantId, client_id: t.clientId }).delete();
        expect(await revision()).toBe(start + 3); // the client, then the app's two grants
        const changes = await knex('pdp_changes').where('revision', '>', start).orderBy('revision').pluck('fact');
        expect(changes).toEqual([
          `client:${t.clientId}`,
          `app:${t.tenantId}:${t.clientId}`,
          `app:${t.tenantId}:${t.clientId}`,
        ]);
        await expect(
          knex.transaction(async (trx) => {
            await trx('clients').where({ id: t.clientId }).update({ status: 'disabled' });
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect(await revision()).toBe(start + 3);
        // Emptied by TRUNCATE (no row triggers): everything is noted. Undone, so the other tests keep their grants.
        await expect(
          knex.transaction(async (trx) => {
            await trx.raw('truncate tenant_grants');
            expect(
              await trx('pdp_changes')
                .where('revision', '>', start + 3)
                .pluck('fact'),
            ).toEqual(['all']);
            throw new Error('undone');
          }),
        ).rejects.toThrow('undone');
      },
    );

    it(
      'answers 503 authorization_unavailable when neither the feed nor the database gives the revision, ' +
        'never a decision from memory',
      async () => {
        const { knex } = system.db;
        const feed = (await openRevisionFeed(system.db, system.config, silent))!;
        const { input } = await selfSetup(target());
        expect(await decide(system.pdpUrl, input)).toMatch(/^allow/);
        expect(await decide(system.pdpUrl, input)).toMatch(/^allow/);
        const away = jest.spyOn(feed, 'read').mockRejectedValue(new Error('feed away'));
        try {
          // The feed away: the database's revision is read instead, and the facts held still serve.
          expect(await decide(system.pdpUrl, input)).toMatch(/^allow/);
          await knex.raw('alter table pdp_revision rename to pdp_revision_away');
          try {
            expect(await decide(system.pdpUrl, input)).toBe('503 authorization_unavailable');
          } finally {
            await knex.raw('alter table pdp_revision_away rename to pdp_revision');
          }
        } finally {
          away.mockRestore();
        }
        expect(await decide(system.pdpUrl, input)).toMatch(/^allow/);
      },
    );

    it(
      'with a revision feed, sends no statement for a decision whose facts are held; after a change, reads the ' +
        'revision and only the inputs it named',
      async () => {
        const target_ = target();
        const feed = (await openRevisionFeed(system.db, system.config, silent))!;
        const { store, sent } = notingStore(system.db.knex, feed);
        const [a, b] = [await selfSetup(target_), await selfSetup(target_)];
        const both = () => Promise.all([a.input, b.input].map((i) => store.facts(i)));
        await both();
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_fact_rows of 2']);
        await both();
        await both();
        expect(sent.splice(0)).toEqual([]);
        await target_.admin.call('PATCH', `/clients/${b.t.clientId}`, { name: 'renamed' });
        const [, facts] = await both();
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_fact_rows of 1']);
        expect(facts!.client?.status).toBe('active');
        await both();
        expect(sent.splice(0)).toEqual([]);
      },
    );

    it(
      'trusts the feed only while it keeps its token: a feed that lost what was published (Redis restarted empty) ' +
        'makes the next batch read the database',
      async () => {
        const mark = { revision: 0, token: 'first life' };
        const feed = {
          publish: async () => {},
          read: async () => ({ ...mark }),
          trustMs: FEED_TRUST_MS,
          close: async () => {},
        };
        const { store, sent } = notingStore(system.db.knex, feed);
        const { input } = await selfSetup(target());
        await store.facts(input);
        await store.facts(input);
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_fact_rows of 1']);
        mark.token = 'second life';
        await store.facts(input);
        await store.facts(input);
        expect(sent.splice(0)).toEqual(['pdp_revision']);
        // A revision beyond the one read is a change the facts held may lack.
        mark.revision = Number.MAX_SAFE_INTEGER;
        await store.facts(input);
        expect(sent.splice(0)).toEqual(['pdp_revision']);
      },
    );

    it(
      'reads the revision from the database on every batch while the feed cannot be read (Redis stopped) and once the ' +
        'last reading is older than the trust window, then decides from the facts held again',
      async () => {
        let readable = true;
        const feed = {
          publish: async () => {},
          read: async () => {
            if (!readable) throw new Error('Redis stopped');
            return { revision: 0, token: 'one life' };
          },
          trustMs: FEED_TRUST_MS,
          close: async () => {},
        };
        const { store, sent } = notingStore(system.db.knex, feed);
        const { input } = await selfSetup(target());
        await store.facts(input);
        await store.facts(input);
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_fact_rows of 1']); // the second batch: the feed vouched
        readable = false;
        for (let batch = 0; batch < 3; batch++) await store.facts(input);
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_revision', 'pdp_revision']);
        readable = true;
        await new Promise((ok) => setTimeout(ok, FEED_TRUST_MS + 50));
        await store.facts(input); // the last reading is older than the window: the feed alone vouches for nothing
        await store.facts(input); // trusted again from the reading just made
        expect(sent.splice(0)).toEqual(['pdp_revision']);
      },
    );

    it(
      `decides a change that no process published (an operator's SQL) once the feed's ${FEED_TRUST_MS} ms of trust ` +
        'run out',
      async () => {
        const target_ = target();
        const { t, input } = await selfSetup(target_, ['svc.profile.self.read']);
        expect(await decide(system.pdpUrl, input)).toMatch(/^allow/);
        // Its own handle on the same database, which publishes nothing (an embedded database has one: the system's,
        // whose publishing is paused here instead).
        const feed = (await openRevisionFeed(system.db, system.config, silent))!;
        const unpublished = jest.spyOn(feed, 'publish').mockResolvedValue();
        try {
          await system.db.knex('tenant_grants').where({ tenant_id: t.tenantId, client_id: t.clientId }).delete();
        } finally {
          unpublished.mockRestore();
        }
        await waitFor(
          'the unpublished change decided',
          async () => !(await decide(system.pdpUrl, input)).startsWith('allow'),
          FEED_TRUST_MS + 4000,
          20,
        );
        expect(await decide(system.pdpUrl, input)).toBe('capability_not_granted');
      },
    );

    it(
      'acknowledges a change whose revision could not be published only once the PDPs no longer trust the feed ' +
        'for older facts: the next decision sees it',
      async () => {
        const target_ = target();
        const { t, input } = await selfSetup(target_);
        expect(await decide(system.pdpUrl, input)).toMatch(/^allow/); // facts held, the feed trusted
        const feed = (await openRevisionFeed(system.db, system.config, silent))!;
        const away = jest.spyOn(feed, 'publish').mockRejectedValue(new Error('feed away'));
        let waitedMs: number;
        try {
          const began = performance.now();
          const put = { capabilities: ['svc.tenant.info.read'] };
          await ok(target_.admin.call('PUT', `/tenants/${t.tenantId}/grants/${t.clientId}`, put));
          waitedMs = performance.now() - began;
        } finally {
          away.mockRestore();
        }
        expect(waitedMs).toBeGreaterThanOrEqual(FEED_TRUST_MS); // the change waited out the trust: it was not lost
        expect(await decide(system.pdpUrl, input)).toBe('capability_not_granted');
      },
    );

    it(
      'sends only the revision reading for a decision whose facts are held, ' +
        'and after a change reads again only the inputs whose facts it named',
      async () => {
        const target_ = target();
        const { store, sent } = notingStore(system.db.knex);
        const [a, b] = [await selfSetup(target_), await selfSetup(target_)];
        const both = () => Promise.all([a.input, b.input].map((i) => store.facts(i)));
        await both();
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_fact_rows of 2']);
        await both();
        await both();
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_revision']);
        await target_.admin.call('PATCH', `/clients/${b.t.clientId}`, { name: 'renamed' });
        const [, facts] = await both();
        expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_fact_rows of 1']);
        expect(facts!.client?.status).toBe('active');
        await both();
        expect(sent.splice(0)).toEqual(['pdp_revision']);
      },
    );

    it(
      'reads an addressed person from the database for every decision, whether the person exists or not, so that ' +
        'the time of a 404 cannot tell a person of another tenant from none (tests/api/existence.ts)',
      async () => {
        const { store, sent } = notingStore(system.db.knex);
        const a = await selfSetup(target());
        const about = (personId: string) => ({ ...a.input, resource: { ...a.input.resource, personId } });
        const absent = `psn_${'0'.repeat(26)}`;
        for (const personId of [a.t.personId, absent]) {
          await store.facts(about(personId));
          await store.facts(about(personId));
          expect(sent.splice(0)).toEqual(['pdp_revision', 'pdp_fact_rows of 1', 'pdp_revision', 'pdp_fact_rows of 1']);
        }
        // The token's own facts are held all the while: a decision about no person sends only the revision reading.
        await store.facts(a.input);
        expect(sent.splice(0)).toEqual(['pdp_revision']);
      },
    );

    it('decides right with room for only a few facts: the least recently used go, and are read again', async () => {
      const target_ = target();
      const store = knexPolicyStore(system.db.knex, { maxFacts: 3 });
      const a = await selfSetup(target_);
      const b = await selfSetup(target_, ['svc.tenant.info.read']);
      for (let round = 0; round < 3; round++) {
        const [da, db] = await Promise.all([a.input, b.input].map(async (i) => evaluate(i, await store.facts(i))));
        expect([da!.allow, db!.allow ? 'allow' : (db as { code: string }).code]).toEqual([
          true,
          'capability_not_granted',
        ]);
      }
    });
  });

  describe('the revision feed in Redis', () => {
    const key = `pdp-revision:test-${process.pid}-${randomSecret().slice(0, 8)}`;
    let redis: RedisClient;
    let feed: RevisionFeed;
    beforeAll(async () => {
      redis = (await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', silent))!;
      feed = redisFeed(redis, key, silent);
    });
    afterAll(async () => {
      await redis?.del(key);
      await feed?.close();
    });

    it('keeps the highest revision published, and comes back with another token once it lost its data', async () => {
      const first = await feed.read();
      expect(first.revision).toBe(0);
      await feed.publish(7);
      await feed.publish(5); // a writer whose commit came earlier, publishing later
      expect(await feed.read()).toEqual({ revision: 7, token: first.token });
      await redis.del(key); // as a Redis restarted without its data
      await feed.publish(3);
      const reborn = await feed.read();
      expect(reborn.revision).toBe(3);
      expect(reborn.token).not.toBe(first.token);
    });
  });

  describe('the fact cache', () => {
    it('holds at most its bound, dropping the least recently used', () => {
      const cache = new FactCache(2);
      cache.advance(-1, 1, []);
      cache.keep(1, 'a', 1);
      cache.keep(1, 'b', 2);
      cache.get('a');
      cache.keep(1, 'c', 3);
      expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.size]).toEqual([1, undefined, 3, 2]);
    });

    it('evicts exactly the facts a change names, everything when the log is incomplete, and keeps no stale read', () => {
      const cache = new FactCache();
      cache.advance(-1, 5, []);
      for (const f of ['client:a', 'client:b', 'catalogue']) cache.keep(5, f, f);
      cache.advance(5, 6, ['client:a']);
      expect([cache.get('client:a'), cache.get('client:b')]).toEqual([undefined, 'client:b']);
      cache.keep(5, 'client:a', 'read before revision 6'); // began at 5: may predate the change
      expect(cache.get('client:a')).toBeUndefined();
      cache.advance(5, 6, ['client:a']); // a reading overtaken by the one applied: nothing changes
      expect(cache.get('client:b')).toBe('client:b');
      cache.advance(6, 9, ['client:b']); // two of three changes: the log no longer holds them all
      expect([cache.size, cache.revision]).toEqual([0, 9]);
      cache.keep(9, 'catalogue', 'c');
      cache.advance(9, 10, ['all']);
      expect(cache.size).toBe(0);
      cache.keep(10, 'catalogue', 'c');
      cache.advance(10, 4, []); // the database went back (restored): nothing held can be trusted
      expect([cache.size, cache.revision]).toEqual([0, 4]);
    });
  });

  describe('decisions from memory, two PDP processes: changes through one, decisions from the other', () => {
    let stopAll: () => Promise<void>;
    let target: Target;
    beforeAll(async () => {
      // A database of its own on the run's PostgreSQL, or a private PostgreSQL when the run is embedded (two processes
      // cannot share an embedded database).
      const server = process.env.DATABASE_URL;
      const pg = server ? undefined : await privatePostgres();
      // Their revision feed: the run's Redis (the machine's when the run is embedded), as in a deployment.
      const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
      const scratch = await scratchDatabase(server ?? pg!.url);
      const adminToken = randomSecret();
      const [p1, p2] = await freePorts(2);
      const pdp = (port: number) =>
        new Child(`policies:${port}`, ...nodeEntry('policies/main.ts'), {
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: scratch.url,
            REDIS_URL: redisUrl,
            INTERNAL_SECRET,
            ADMIN_TOKEN: adminToken,
            PDP_PORT: String(port),
            LOG_LEVEL: 'info',
          },
          readyLine: /"msg":"policies[^"]*listening"/,
        });
      const [changes, decisions] = [pdp(p1!), pdp(p2!)];
      await changes.start(); // migrates the database first
      await decisions.start();
      // The test's own changes (SQL where no API makes them) publish their revisions as the services' do.
      const db: Database = await openDatabase({ databaseUrl: scratch.url });
      await openRevisionFeed(db, { REDIS_URL: redisUrl, REDIS_CLUSTER: false }, silent);
      target = {
        decisionUrl: `http://127.0.0.1:${p2}`,
        admin: adminClient({ pdpUrl: `http://127.0.0.1:${p1}`, adminToken }),
        knex: db.knex,
      };
      stopAll = async () => {
        await Promise.all([changes.stop(), decisions.stop()]);
        await db.close();
        await scratch.drop();
        await pg?.destroy();
      };
    });
    afterAll(async () => {
      await stopAll?.();
    });

    changesUnderLoad(() => target);
  });
});
