// The PDP reads the facts of the decisions asked for in the same event-loop turn in one statement (policies/store.ts),
// and answers the gateway's batch calls (several requests' decisions in one call) item by item, in order. Each
// decision must still get its own facts, in the state the database is in when it is read, and its own log row.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { System } from '../../infra/system.js';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type TenantSetup } from '../support/admin.js';
import { knexPolicyStore } from '../../policies/store.js';
import {
  DECISION_BATCH_PATH,
  DECISION_PATH,
  MAX_DECISION_BODY_BYTES,
  MAX_DECISIONS_PER_CALL,
  type DecisionInput,
} from '../../wire/decision.js';

describe('pdp-batching', () => {
  const INTERNAL_SECRET = 'pdp-batching-internal-secret-0123456789';
  let system: System;
  let tenants: TenantSetup[];
  beforeAll(async () => {
    system = await startTestSystem({ INTERNAL_SECRET });
    const admin = adminClient(system);
    tenants = [await setupTenant(admin), await setupTenant(admin, { capabilities: ['svc.tenant.info.read'] })];
  });
  afterAll(async () => {
    await system?.close();
  });

  const inputFor = (t: TenantSetup, clientId = t.clientId): DecisionInput => ({
    requestId: 'r-batch',
    token: {
      sub: t.personId,
      client_id: clientId,
      tenant_id: t.tenantId,
      profile: 'self',
      scope: 'svc.profile.self.read',
      actor_account_id: t.accountId,
    },
    capability: 'svc.profile.self.read',
    resource: { type: 'self' },
  });

  describe('decision facts read together', () => {
    it('answers each of many decisions asked in one turn with the facts of its own input, in any mix', async () => {
      const store = knexPolicyStore(system.db.knex);
      const inputs = Array.from({ length: 150 }, (_, i) =>
        i % 3 === 2 ? inputFor(tenants[0]!, 'tp_nobody_app') : inputFor(tenants[i % 3]!),
      );
      const facts = await Promise.all(inputs.map((input) => store.facts(input)));
      facts.forEach((f, i) => {
        const input = inputs[i]!;
        const tenant = tenants.find((t) => t.tenantId === input.token.tenant_id)!;
        expect({
          client: f.client?.tenant_id ?? null,
          tenant: f.tenant?.id,
          account: f.account?.id,
          granted: [...f.granted].sort(),
        }).toEqual({
          client: input.token.client_id === tenant.clientId ? tenant.tenantId : null,
          tenant: tenant.tenantId,
          account: tenant.accountId,
          granted:
            input.token.client_id === tenant.clientId
              ? tenant === tenants[0]
                ? ['svc.profile.self.read', 'svc.tenant.info.read']
                : ['svc.tenant.info.read']
              : [],
        });
      });
    });

    it('reads the database as it is when the decision is asked for, with nothing kept from an earlier read', async () => {
      const store = knexPolicyStore(system.db.knex);
      const [t] = tenants;
      expect((await store.facts(inputFor(t!))).client?.status).toBe('active');
      await system.db.knex('clients').where({ id: t!.clientId }).update({ status: 'disabled' });
      try {
        expect((await store.facts(inputFor(t!))).client?.status).toBe('disabled');
      } finally {
        await system.db.knex('clients').where({ id: t!.clientId }).update({ status: 'active' });
      }
    });
  });

  describe('the batch endpoint', () => {
    const askBatch = async (items: unknown[], secret = INTERNAL_SECRET) => {
      const res = await fetch(`${system.pdpUrl}${DECISION_BATCH_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-secret': secret },
        body: JSON.stringify({ items }),
      });
      return {
        status: res.status,
        body: (await res.json()) as { items?: Record<string, unknown>[]; error?: string; message?: string },
      };
    };
    const logRows = (requestId: string) =>
      system.db.knex('decision_logs').where({ request_id: requestId }).select('allow', 'code');
    const flushed = async (requestId: string, rows: number) => {
      for (let i = 0; i < 100 && (await logRows(requestId)).length < rows; i++)
        await new Promise((r) => setTimeout(r, 50));
    };

    const askOne = async (item: DecisionInput) =>
      (
        await fetch(`${system.pdpUrl}${DECISION_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-internal-secret': INTERNAL_SECRET },
          body: JSON.stringify(item),
        })
      ).json();

    it(
      'answers each item with its own decision, ' +
        'the one the single-decision endpoint gives, in the order asked, and logs each',
      async () => {
        const requestId = `r-batch-${Date.now()}`;
        const [a, b] = tenants;
        const items: DecisionInput[] = [
          { ...inputFor(a!), requestId },
          { ...inputFor(a!, 'tp_nobody_app'), requestId },
          { ...inputFor(b!), requestId, token: { ...inputFor(b!).token, profile: 'workload' } },
          { ...inputFor(a!), requestId, token: { ...inputFor(a!).token, actor_account_id: undefined } },
          { ...inputFor(b!), requestId },
        ];
        const { status, body } = await askBatch(items);
        expect(status).toBe(200);
        const one = [];
        for (const item of items) one.push(await askOne(item));
        expect(body.items).toEqual(one);
        // a mix, so an answer in the wrong place shows
        expect(new Set(one.map((d) => d.code)).size).toBeGreaterThanOrEqual(3);
        await flushed(requestId, 2 * items.length);
        expect((await logRows(requestId)).length).toBe(2 * items.length);
      },
    );

    it('answers a malformed item with schema_invalid, which decides nothing, and still decides the others', async () => {
      const { status, body } = await askBatch([{ requestId: 'r-bad' }, inputFor(tenants[0]!)]);
      expect(status).toBe(200);
      expect(body.items).toEqual([
        { error: 'schema_invalid', message: 'malformed decision request' },
        await askOne(inputFor(tenants[0]!)),
      ]);
      expect(body.items![1]).toHaveProperty('allow');
    });

    it.each([
      [
        'more items than the cap',
        MAX_DECISIONS_PER_CALL + 1,
        `a batch carries at most ${MAX_DECISIONS_PER_CALL} decisions; this one has ${MAX_DECISIONS_PER_CALL + 1}`,
      ],
      ['no items', 0, 'a batch is {"items": [decision request, ...]}'],
    ])(
      'refuses a batch of %s with 422 schema_invalid saying why, and decides none of it',
      async (_name, size, message) => {
        const { status, body } = await askBatch(Array.from({ length: size }, () => inputFor(tenants[0]!)));
        expect({ status, error: body.error, message: body.message, items: body.items }).toEqual({
          status: 422,
          error: 'schema_invalid',
          message,
          items: undefined,
        });
      },
    );

    describe('a body it cannot read (policies/decision-body.ts)', () => {
      const LIMIT = MAX_DECISION_BODY_BYTES * MAX_DECISIONS_PER_CALL;
      const post = async (body: string | Buffer | AsyncIterable<Buffer>, headers: Record<string, string> = {}) => {
        const pool = new Pool(system.pdpUrl, { connections: 1 });
        try {
          const res = await pool.request({
            path: DECISION_BATCH_PATH,
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-internal-secret': INTERNAL_SECRET, ...headers },
            body: typeof body === 'string' || Buffer.isBuffer(body) ? body : Readable.from(body),
          });
          const answer = (await res.body.json()) as { error?: string };
          // The connection that carried the refused body still answers the next call.
          const next = await pool.request({
            path: DECISION_BATCH_PATH,
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-internal-secret': INTERNAL_SECRET },
            body: JSON.stringify({ items: [inputFor(tenants[0]!)] }),
          });
          const decided =
            typeof ((await next.body.json()) as { items: { allow?: boolean }[] }).items[0]!.allow === 'boolean';
          return { status: res.statusCode, error: answer.error, decided };
        } finally {
          await pool.close();
        }
      };
      const oversized = () => JSON.stringify({ items: [inputFor(tenants[0]!)], pad: 'x'.repeat(LIMIT) });

      const inChunks = async function* () {
        const body = Buffer.from(oversized());
        for (let at = 0; at < body.length; at += 64 * 1024) yield body.subarray(at, at + 64 * 1024);
      };
      it.each([
        ['text that is not JSON', 422, 'schema_invalid', () => post('{"items": [')],
        ['a gzip-encoded body', 422, 'schema_invalid', () => post(gzipSync('{}'), { 'content-encoding': 'gzip' })],
        ['a Content-Length over the limit', 413, 'payload_too_large', () => post(oversized())],
        ['a chunked body that grows past the limit', 413, 'payload_too_large', () => post(inChunks())],
      ])('answers %s with %i %s, and its connection still serves the next call', async (_name, status, error, send) => {
        const answer = await send();
        expect({ status: answer.status, error: answer.error, decided: answer.decided }).toEqual({
          status,
          error,
          decided: true,
        });
      });
    });

    it('answers only the gateway: without the internal secret, 403 forbidden and no decision', async () => {
      const { status, body } = await askBatch([inputFor(tenants[0]!)], 'guess');
      expect({ status, error: body.error, items: body.items }).toEqual({
        status: 403,
        error: 'forbidden',
        items: undefined,
      });
    });
  });
});
