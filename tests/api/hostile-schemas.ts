// A tenant's extension schema is data the tenant controls (issue 20, finding 1): its patterns are matched in linear
// time, so a catastrophic-backtracking pattern such as ^(a|a)*$ answers as fast as any other refusal instead of
// stalling the process for every tenant; patterns linear matching cannot run are refused at registration by name.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { obtainTokens } from '../support/oauth.js';
import { PERSON_SCOPES, personApi, registerExtension, type PersonApi } from '../support/extensions.js';
import { expectProblem } from '../support/problems.js';

describe('hostile-schemas', () => {
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
    tenant = await setupTenant(admin, {
      capabilities: ['svc.person.read', 'svc.person.metadata.read', 'svc.person.metadata.write'],
    });
    await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
      rateLimit: { tenant: { points: 100_000, durationS: 60 }, account: { points: 100_000, durationS: 60 } },
    });
    token = (await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, PERSON_SCOPES)).access_token;
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  describe('extension schema patterns', () => {
    it('answer the backtracking attack, at 29 and at 10,000 characters, with an ordinary 422', async () => {
      const evil = await registerExtension(admin, tenant.clientId, { 1: EVIL });
      const attack = (length: number) =>
        api.put(token, tenant.personId, evil, { schemaVersion: 1, data: { v: `${'a'.repeat(length)}!` } }, CREATE);
      // Backtracking took 27 s for 29 characters and doubles with each one more: at 10,000 it would never answer, so an
      // answer at all (within the test's timeout) is the linear-time matcher's. No wall time is compared here.
      for (const length of [29, 10_000]) expectProblem(await attack(length), 422, 'schema_invalid');
      // The data the pattern does match is accepted.
      expect(
        (await api.put(token, tenant.personId, evil, { schemaVersion: 1, data: { v: 'aaaa' } }, CREATE)).status,
      ).toBe(201);
    });

    it('refuses at registration, naming the pattern, what linear-time matching cannot run', async () => {
      for (const pattern of ['^(a)\\1$', '(?=a)b', '(?<!a)b']) {
        const res = await admin.checked('createExtension', 'POST', `/clients/${tenant.clientId}/extensions`, {
          name: `lookaround ${pattern}`,
          schemas: { 1: { type: 'object', properties: { v: { type: 'string', pattern } } } },
        });
        expect({ status: res.status, error: res.body.error }).toEqual({ status: 422, error: 'schema_invalid' });
        expect(res.body.message).toContain(JSON.stringify(pattern));
      }
    });
  });
});
