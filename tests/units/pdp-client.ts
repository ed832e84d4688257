// The gateway's PDP client (contract §1 rule 4, §7.3; docs/decisions.md "Decisions travel in batches"): only a
// well-formed allow allows; an unknown deny code is `forbidden`; anything else is undecidable, which the gateway
// answers 503 (fail closed). The decisions asked for in one event-loop turn go in one call, each answered by its own
// item; a failed call fails every decision in it, a failed item only its own.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from '@jest/globals';
import { listen, type Listening } from '../../common/http.js';
import { upstreamPool } from '../../gateway/upstream.js';
import { pdpClient, type PdpAnswer } from '../../gateway/plugins/authorize/pdp-client.js';
import { DECISION_BATCH_PATH, type DecisionInput } from '../../wire/decision.js';

describe('pdp-client', () => {
  interface Call {
    path: string;
    requestId: string | undefined;
    secret: string | undefined;
    items: DecisionInput[];
  }
  /** How the fake PDP answers a call: a status and a body (an object is sent as JSON). */
  type Answer = (items: DecisionInput[]) => { status: number; body: unknown };

  let pdp: Listening & { server: import('node:http').Server };
  let answer: Answer;
  let calls: Call[];
  let pool: ReturnType<typeof upstreamPool>;

  beforeAll(async () => {
    pdp = await listen(0);
    pdp.server.on('request', (req, res) => {
      let text = '';
      req
        .setEncoding('utf8')
        .on('data', (chunk: string) => (text += chunk))
        .on('end', () => {
          const { items } = JSON.parse(text) as { items: DecisionInput[] };
          calls.push({
            path: req.url!,
            requestId: req.headers['x-request-id'] as string | undefined,
            secret: req.headers['x-internal-secret'] as string | undefined,
            items,
          });
          const { status, body } = answer(items);
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(typeof body === 'string' ? body : JSON.stringify(body));
        });
    });
    pool = upstreamPool(pdp.url);
  });
  afterAll(async () => {
    await pool.close();
    await pdp.close();
  });
  beforeEach(() => {
    calls = [];
  });

  const inputFor = (n: number): DecisionInput => ({
    requestId: `req-${String(n).padStart(8, '0')}`,
    token: {
      sub: `psn_${n}`,
      client_id: 'tp_a_b',
      tenant_id: 'ten_x',
      profile: 'self',
      scope: 'svc.profile.self.read',
    },
    capability: 'svc.profile.self.read',
    resource: { type: 'self' },
  });
  const input = inputFor(1);
  const allow = {
    allow: true,
    effectiveScopes: ['svc.profile.self.read'],
    subjectType: 'person',
    rateLimit: { tenant: { points: 1, durationS: 1 }, account: { points: 1, durationS: 1 } },
  };
  const denial = { allow: false, code: 'client_disabled', check: 'client.status' };
  /** Undecidable: the gateway answers it 503 authorization_unavailable, never an allow. */
  const UNDECIDABLE = { ok: false, error: 'authorization_unavailable' };

  /** One decision, the PDP answering its item with `item` (or the whole call with `status` and `body`). */
  const decideOne = (item: unknown, call?: { status: number; body: unknown }) => {
    answer = () => call ?? { status: 200, body: { items: [item] } };
    return pdpClient(pool, { internalSecret: 'secret' })(input);
  };

  describe('reading PDP answers', () => {
    it('passes a well-formed allow through, asked on the batch endpoint with the secret and the request id', async () => {
      expect(await decideOne(allow)).toEqual({ ok: true, value: allow });
      expect(calls).toEqual([
        { path: DECISION_BATCH_PATH, requestId: input.requestId, secret: 'secret', items: [input] },
      ]);
    });

    it('keeps a known deny code and its check', async () => {
      expect(await decideOne(denial)).toEqual({ ok: true, value: denial });
    });

    it('turns an unknown deny code into forbidden, still a denial', async () => {
      expect(await decideOne({ allow: false, code: 'quota_of_moons', check: 'x' })).toMatchObject({
        ok: true,
        value: { allow: false, code: 'forbidden' },
      });
    });

    it.each([
      ['an allow missing its scopes', { allow: true }],
      ['allow: "yes"', { allow: 'yes', effectiveScopes: [], subjectType: 'person', rateLimit: {} }],
      ['an allow with an empty rate-limit policy', { ...allow, rateLimit: {} }],
      ['an allow with a scope outside the catalogue', { ...allow, effectiveScopes: ['svc.admin'] }],
      ["the PDP's refusal of a malformed item", { error: 'schema_invalid', message: 'malformed decision request' }],
      ['null', null],
    ])('treats an item that is %s as undecidable, never as an allow', async (_name, item) => {
      expect(await decideOne(item)).toMatchObject(UNDECIDABLE);
    });

    it.each([
      ['a 500', { status: 500, body: { items: [allow] } }],
      ['a 422 (the PDP refused the batch)', { status: 422, body: { error: 'schema_invalid' } }],
      ['a body that is not JSON', { status: 200, body: 'allow' }],
      ['a body without items', { status: 200, body: allow }],
      ['a longer list of items than asked for', { status: 200, body: { items: [allow, allow] } }],
    ])('treats a call answered with %s as undecidable', async (_name, call) => {
      expect(await decideOne(undefined, call)).toMatchObject(UNDECIDABLE);
    });

    it('treats an unreachable PDP as undecidable', async () => {
      const closed = upstreamPool('http://127.0.0.1:1');
      try {
        expect(await pdpClient(closed, { internalSecret: 'secret' })(input)).toMatchObject(UNDECIDABLE);
      } finally {
        await closed.close();
      }
    });
  });

  describe('batching', () => {
    const echo: Answer = (items) => ({
      status: 200,
      body: { items: items.map((i) => (Number(i.token.sub.slice(4)) % 2 ? allow : denial)) },
    });

    it(
      'sends the decisions asked in one turn in one call, ' + 'and gives each request the answer to its own item',
      async () => {
        answer = echo;
        const sizes: number[] = [];
        const decide = pdpClient(pool, { internalSecret: 'secret', onCall: (n) => sizes.push(n) });
        const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => decide(inputFor(n))));
        expect(calls.map((c) => c.items.map((i) => i.requestId))).toEqual([
          Array.from({ length: 10 }, (_, n) => inputFor(n).requestId),
        ]);
        expect(answers).toEqual(Array.from({ length: 10 }, (_, n) => ({ ok: true, value: n % 2 ? allow : denial })));
        expect(sizes).toEqual([10]);
        // A batch's call has its own request id; each item keeps its request's.
        expect(calls[0]!.requestId).not.toBe(inputFor(0).requestId);
      },
    );

    it('asks again for a decision asked again: nothing is kept between calls', async () => {
      answer = echo;
      const decide = pdpClient(pool, { internalSecret: 'secret' });
      await decide(input);
      answer = () => ({ status: 200, body: { items: [denial] } });
      expect(await decide(input)).toEqual({ ok: true, value: denial });
      expect(calls).toHaveLength(2);
    });

    it('splits a backlog larger than the cap into calls of at most the cap, sent together', async () => {
      answer = echo;
      const decide = pdpClient(pool, { internalSecret: 'secret', maxPerCall: 64 });
      const answers = await Promise.all(Array.from({ length: 150 }, (_, n) => decide(inputFor(n))));
      expect(calls.map((c) => c.items.length).sort((a, b) => a - b)).toEqual([22, 64, 64]);
      expect(answers).toEqual(Array.from({ length: 150 }, (_, n) => ({ ok: true, value: n % 2 ? allow : denial })));
    });

    it('answers every member of a failed call undecidable, and only the member of a failed item', async () => {
      answer = (items) =>
        items.length > 2 ? { status: 503, body: {} } : { status: 200, body: { items: [allow, { allow: 'perhaps' }] } };
      const decide = pdpClient(pool, { internalSecret: 'secret' });
      const failed: PdpAnswer[] = await Promise.all([1, 2, 3].map((n) => decide(inputFor(n))));
      expect(failed.every((a) => !a.ok && a.error === 'authorization_unavailable')).toBe(true);
      const [ok, bad] = await Promise.all([decide(inputFor(1)), decide(inputFor(2))]);
      expect(ok).toEqual({ ok: true, value: allow });
      expect(bad).toMatchObject(UNDECIDABLE);
    });
  });
});
