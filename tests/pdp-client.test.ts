// The gateway's reading of PDP answers (contract §1 rule 4, §7.3): only a well-formed allow allows; an unknown deny
// code is `forbidden`; anything else is undecidable, which the gateway answers 503 (fail closed).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { listen, type Listening } from '../common/http.js';
import { upstreamPool } from '../gateway/upstream.js';
import { pdpClient } from '../gateway/pdp-client.js';
import type { DecisionInput } from '../policies/decision.js';

let pdp: Listening & { server: import('node:http').Server };
let answer: { status: number; body: string };
let askedWith: string | undefined;
let pool: ReturnType<typeof upstreamPool>;

beforeAll(async () => {
  pdp = await listen(0);
  pdp.server.on('request', (req, res) => {
    askedWith = req.headers['x-request-id'] as string | undefined;
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  pool = upstreamPool(pdp.url);
});
afterAll(async () => {
  await pool.close();
  await pdp.close();
});

const input: DecisionInput = {
  requestId: 'req-00000001',
  token: { sub: 'psn_x', client_id: 'tp_a_b', tenant_id: 'ten_x', profile: 'self', scope: 'svc.profile.self.read' },
  capability: 'svc.profile.self.read',
  resource: { type: 'self' },
};
const decide = (status: number, body: unknown) => {
  answer = { status, body: typeof body === 'string' ? body : JSON.stringify(body) };
  return pdpClient(pool, '/decide', 'secret')(input);
};
const allow = { allow: true, effectiveScopes: ['svc.profile.self.read'], subjectType: 'person', rateLimit: { tenant: { points: 1, durationS: 1 }, account: { points: 1, durationS: 1 } } };

describe('reading PDP answers', () => {
  it('passes a well-formed allow through', async () => {
    expect(await decide(200, allow)).toEqual(allow);
    expect(askedWith).toBe(input.requestId); // the PDP logs the gateway's request id
  });

  it('keeps a known deny code and its check', async () => {
    expect(await decide(200, { allow: false, code: 'client_disabled', check: 'client.status' })).toEqual({ allow: false, code: 'client_disabled', check: 'client.status' });
  });

  it('turns an unknown deny code into forbidden, still a denial', async () => {
    expect(await decide(200, { allow: false, code: 'quota_of_moons', check: 'x' })).toMatchObject({ allow: false, code: 'forbidden' });
  });

  it.each([
    ['a 500', 500, { allow: true }],
    ['a 200 with an allow missing its scopes', 200, { allow: true }],
    ['a 200 with allow: "yes"', 200, { allow: 'yes', effectiveScopes: [], subjectType: 'person', rateLimit: {} }],
    ['an allow with an empty rate-limit policy', 200, { ...allow, rateLimit: {} }],
    ['an allow with a scope outside the catalogue', 200, { ...allow, effectiveScopes: ['svc.admin'] }],
    ['a body that is not JSON', 200, 'allow'],
  ])('treats %s as undecidable, never as an allow', async (_name, status, body) => {
    expect(await decide(status, body)).toMatchObject({ undecidable: true });
  });

  it('treats an unreachable PDP as undecidable', async () => {
    const closed = upstreamPool('http://127.0.0.1:1');
    try {
      expect(await pdpClient(closed, '/decide', 'secret')(input)).toMatchObject({ undecidable: true });
    } finally {
      await closed.close();
    }
  });
});
