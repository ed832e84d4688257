// Connected apps, for the person (platform-interfaces.md): in real Chromium, a person signs in at
// {auth_url}/account/apps with the authorize step's login form, sees exactly the apps they allowed (never another
// person's), and "Revoke access" ends that app's consent: its access token gets 403 subject_revoked, its refresh token
// invalid_grant, and the next authorization asks for consent again. The page is protected like the login and consent
// pages.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { authorizationRequest, discover, obtainTokens, signInAndConsent, type Tokens } from '../support/oauth.js';
import { callApi } from '../support/api.js';
import { expectProblem } from '../support/problems.js';

describe('connected-apps', () => {
  const SCOPE = 'svc.profile.self.read svc.tenant.info.read';

  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  let tenant: TenantSetup;
  let second: { clientId: string; name: string };
  let bob: { username: string; password: string };

  const appsUrl = () => `${system.authUrl}/account/apps`;
  const getMe = (token: string) => callApi(system.baseUrl, 'getMe', '/me', token);
  const tokensFor = (clientId: string, person: { username: string; password: string }): Promise<Tokens> =>
    obtainTokens(browser, { authUrl: system.authUrl, clientId, redirectUri: tenant.redirectUri }, person, SCOPE);
  async function refreshError(clientId: string, refreshToken: string): Promise<string> {
    try {
      await oidc.refreshTokenGrant(
        await discover({ authUrl: system.authUrl, clientId, redirectUri: tenant.redirectUri }),
        refreshToken,
      );
      return 'ok';
    } catch (err) {
      return (err as { error?: string }).error ?? String(err);
    }
  }

  /** Signs in on the connected-apps page with the keyboard (type, Enter) and returns the page showing the apps. */
  async function signIn(context: BrowserContext, person: { username: string; password: string }): Promise<Page> {
    const page = await context.newPage();
    await page.goto(appsUrl());
    await page.getByLabel('Username').fill(person.username);
    await page.getByLabel('Password').fill(person.password);
    await Promise.all([page.waitForURL(appsUrl()), page.getByLabel('Password').press('Enter')]);
    await page.getByRole('heading', { name: 'Connected apps' }).waitFor();
    return page;
  }
  const appNames = async (page: Page) => page.getByRole('region').getByRole('heading', { level: 2 }).allTextContents();

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    admin = adminClient(system);
    tenant = await setupTenant(admin, { capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'] });
    const client = await admin.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
      slug: 'second',
      name: 'Second App',
      kind: 'third_party',
      type: 'public',
      redirectUris: [tenant.redirectUri],
    });
    await admin.ok('PUT', `/tenants/${tenant.tenantId}/grants/${client.clientId}`, {
      capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'],
    });
    second = { clientId: client.clientId, name: 'Second App' };
    bob = { username: `bob-${Date.now().toString(36)}`, password: 'another long password' };
    await admin.ok('POST', `/tenants/${tenant.tenantId}/persons`, { displayName: 'Bob', ...bob });
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  describe('connected apps page', () => {
    it(
      'is a sign-in form first, served with the login page protections, ' +
        'and refuses a wrong password without saying why',
      async () => {
        const res = await fetch(appsUrl());
        expect(res.status).toBe(200);
        expect(res.headers.get('cache-control')).toBe('no-store');
        expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        const html = await res.text();
        expect(html).toMatch(/name="username"/);
        expect(html).toMatch(/name="password"/);
        const wrong = await fetch(appsUrl(), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ username: tenant.username, password: 'not the password' }).toString(),
          redirect: 'manual',
        });
        expect(wrong.status).toBe(401);
        expect(wrong.headers.get('set-cookie')).toBeNull();
      },
    );

    it(
      'shows each person exactly the apps they allowed, ' + "revokes one app's access, and leaves the rest working",
      async () => {
        const aliceFirst = await tokensFor(tenant.clientId, tenant);
        const aliceSecond = await tokensFor(second.clientId, tenant);
        const bobFirst = await tokensFor(tenant.clientId, bob);

        const aliceContext = await browser.newContext();
        const bobContext = await browser.newContext();
        try {
          const alice = await signIn(aliceContext, tenant);
          expect((await appNames(alice)).sort()).toEqual([tenant.clientName, second.name].sort());
          const firstApp = alice.getByRole('region', { name: tenant.clientName });
          await expect(firstApp.textContent()).resolves.toContain(tenant.tenantName);
          await expect(firstApp.textContent()).resolves.toContain('svc.tenant.info.read');
          await expect(firstApp.textContent()).resolves.toMatch(/last token issued/);

          const bobPage = await signIn(bobContext, bob);
          expect(await appNames(bobPage)).toEqual([tenant.clientName]);

          // Keyboard: focus the first app's button and press Enter.
          await firstApp.getByRole('button', { name: 'Revoke access' }).focus();
          await Promise.all([alice.waitForURL(/revoked=1/), alice.keyboard.press('Enter')]);
          await expect(alice.getByRole('status').textContent()).resolves.toMatch(/Access revoked/);
          expect(await appNames(alice)).toEqual([second.name]);
        } finally {
          await aliceContext.close();
          await bobContext.close();
        }

        expectProblem(await getMe(aliceFirst.access_token), 403, 'subject_revoked');
        expect(await refreshError(tenant.clientId, aliceFirst.refresh_token!)).toBe('invalid_grant');
        // The other app of the same person, and the same app of another person, are untouched.
        expect((await getMe(aliceSecond.access_token)).status).toBe(200);
        expect((await getMe(bobFirst.access_token)).status).toBe(200);
        expect(await refreshError(second.clientId, aliceSecond.refresh_token!)).toBe('ok');
      },
    );

    it('asks for consent again at the next authorization of a revoked app', async () => {
      const config = await discover({
        authUrl: system.authUrl,
        clientId: tenant.clientId,
        redirectUri: tenant.redirectUri,
      });
      const request = await authorizationRequest(config, tenant.redirectUri, SCOPE);
      let consentShown = false;
      const callback = await signInAndConsent(browser, request.url, tenant, 'Allow', async (page) => {
        consentShown = await page.getByRole('button', { name: 'Allow', exact: true }).isVisible();
      });
      expect(consentShown).toBe(true);
      expect(callback.searchParams.get('code')).toBeTruthy();
    });

    it('refuses a revoke form without the session or with a wrong CSRF token, and revokes nothing', async () => {
      const tokens = await tokensFor(second.clientId, tenant);
      const context = await browser.newContext();
      try {
        const page = await signIn(context, tenant);
        for (const csrf of ['', 'forged-token']) {
          const res = await page.request.post(`${appsUrl()}/revoke`, {
            form: { _csrf: csrf, clientId: second.clientId },
            maxRedirects: 0,
          });
          expect(res.status()).toBe(403);
        }
        const anonymous = await fetch(`${appsUrl()}/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `clientId=${second.clientId}`,
          redirect: 'manual',
        });
        expect(anonymous.status).toBe(403);
      } finally {
        await context.close();
      }
      expect((await getMe(tokens.access_token)).status).toBe(200);
    });
  });
});
