// A tenant's extension schema is data the tenant controls (issue 20, finding 1): its patterns are matched in linear
// time, so a catastrophic-backtracking pattern such as ^(a|a)*$ answers as fast as any other refusal instead of
// stalling the process for every tenant; patterns linear matching cannot run are refused at registration by name.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../infra/system.js';
import { startTestSystem } from './support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from './support/admin.js';
import { launchBrowser } from './support/browser.js';
import { obtainTokens } from './support/oauth.js';
import { PERSON_SCOPES, personApi, registerExtension, type PersonApi } from './support/extensions.js';
import { expectProblem } from './support/problems.js';

const EVIL = { type: 'object', properties: { v: { type: 'string', pattern: '^(a|a)*$' } } };
const CREATE = { 'if-none-match': '*' };

let system: System;
let browser: Browser;
let admin: AdminClient;
let api: PersonApi;
let tenant: TenantSetup;
let token: string;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
  admin = adminClient(system);
  api = personApi(system.baseUrl);
  tenant = await setupTenant(admin, { capabilities: ['svc.person.read', 'svc.person.metadata.read', 'svc.person.metadata.write'] });
  await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { rateLimit: { tenant: { points: 100_000, durationS: 60 }, account: { points: 100_000, durationS: 60 } } });
  token = (await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, PERSON_SCOPES)).access_token;
});
afterAll(async () => {
  await browser?.close();
  await system?.close();
});

/** Median wall time of `n` sequential calls of `call`, in ms. */
async function medianMs(n: number, call: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

describe('extension schema patterns', () => {
  it('answer the backtracking attack, at 29 and at 10,000 characters, about as fast as an ordinary 422', async () => {
    const evil = await registerExtension(admin, tenant.clientId, { 1: EVIL });
    const plain = await registerExtension(admin, tenant.clientId, { 1: { type: 'object', properties: { v: { type: 'string' } } } });
    const attack = (length: number) => () => api.put(token, tenant.personId, evil, { schemaVersion: 1, data: { v: `${'a'.repeat(length)}!` } }, CREATE);
    for (const length of [29, 10_000]) expectProblem(await attack(length)(), 422, 'schema_invalid');
    const ordinary = await medianMs(7, () => api.put(token, tenant.personId, plain, { schemaVersion: 1, data: { v: 42 } }, CREATE));
    const short = await medianMs(7, attack(29));
    const long = await medianMs(7, attack(10_000));
    // Backtracking took 27 s for 29 characters and doubles per character; linear matching stays within a few times
    // an ordinary refusal (the long body is also 10 KB to read and check).
    expect({ short: short / ordinary < 5, long: long / ordinary < 10 }).toEqual({ short: true, long: true });
    // The data the pattern does match is accepted.
    expect((await api.put(token, tenant.personId, evil, { schemaVersion: 1, data: { v: 'aaaa' } }, CREATE)).status).toBe(201);
  });

  it('refuses at registration, naming the pattern, what linear-time matching cannot run', async () => {
    for (const pattern of ['^(a)\\1$', '(?=a)b', '(?<!a)b']) {
      const res = await admin.checked('createExtension', 'POST', `/clients/${tenant.clientId}/extensions`, {
        name: `lookaround ${pattern}`, schemas: { 1: { type: 'object', properties: { v: { type: 'string', pattern } } } },
      });
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 422, error: 'schema_invalid' });
      expect(res.body.message).toContain(JSON.stringify(pattern));
    }
  });
});
