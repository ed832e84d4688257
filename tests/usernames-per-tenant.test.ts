// Usernames are unique per tenant (issue 20, finding 10): a tenant may create a person whose username another tenant
// already uses, without learning that it does; each person signs in to their own tenant's apps with their own
// password; the same name twice in one tenant is still 409.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../infra/system.js';
import { startTestSystem } from './support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from './support/admin.js';
import { launchBrowser } from './support/browser.js';
import { authorizationRequest, discover, obtainTokens } from './support/oauth.js';
import { callApi } from './support/api.js';

let system: System;
let browser: Browser;
let admin: AdminClient;
let a: TenantSetup;
let b: TenantSetup;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
  admin = adminClient(system);
  [a, b] = [await setupTenant(admin), await setupTenant(admin)];
});
afterAll(async () => {
  await browser?.close();
  await system?.close();
});

const personOf = async (tenant: TenantSetup, person: { username: string; password: string }) => {
  const tokens = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, person, 'svc.profile.self.read');
  return (await callApi(system.baseUrl, 'getMe', '/me', tokens.access_token)).body.subjectId as string;
};

/** The status of the login form of a fresh authorization request of `tenant`'s app, posted with `person`. */
async function loginStatus(tenant: TenantSetup, person: { username: string; password: string }): Promise<number> {
  const config = await discover({ authUrl: system.authUrl, ...tenant });
  const request = await authorizationRequest(config, tenant.redirectUri, 'svc.profile.self.read');
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(request.url.toString());
    const action = await page.locator('form').getAttribute('action');
    const res = await page.request.post(new URL(action!, system.authUrl).toString(), { form: person, maxRedirects: 0 });
    return res.status();
  } finally {
    await context.close();
  }
}

describe('usernames per tenant', () => {
  it(
    'lets another tenant create a person with a taken username, ' + 'and each signs in to their own tenant only',
    async () => {
      const twin = { username: a.username, password: 'a different long password' };
      const created = await admin.checked('createPerson', 'POST', `/tenants/${b.tenantId}/persons`, {
        displayName: 'Twin',
        ...twin,
      });
      expect(created.status).toBe(201);
      // Each tenant's app signs in its own person under the same name, with that person's password.
      expect(await personOf(a, a)).toBe(a.personId);
      expect(await personOf(b, twin)).toBe(created.body.personId);
      // A's password does not open B's person: B's login page fails as for a wrong password.
      expect(await loginStatus(b, a)).toBe(401);
      // Connected apps has no tenant: each signs in with their own password (the one account it matches).
      for (const person of [a, twin]) {
        const res = await fetch(`${system.authUrl}/account/apps`, {
          method: 'POST',
          redirect: 'manual',
          body: new URLSearchParams(person),
        });
        expect(res.status).toBe(303);
      }
    },
  );

  it('still refuses the same username twice in one tenant with 409', async () => {
    const again = await admin.checked('createPerson', 'POST', `/tenants/${a.tenantId}/persons`, {
      displayName: 'Again',
      username: a.username,
      password: 'long enough password',
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('already_exists');
  });
});
