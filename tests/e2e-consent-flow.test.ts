// What a third-party app does: authorization request with PKCE, the person signs in and consents in a real browser,
// the app exchanges the code with openid-client and calls the API through the gateway.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import * as oidc from 'openid-client';
import type { System } from '../infra/system.js';
import { startTestSystem } from './support/system.js';
import { adminClient, setupTenant, type TenantSetup } from './support/admin.js';
import { launchBrowser } from './support/browser.js';
import { authorizationRequest, discover, signInAndConsent } from './support/oauth.js';
import { callApi } from './support/api.js';

let system: System;
let browser: Browser;
let tenant: TenantSetup;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
  tenant = await setupTenant(adminClient(system), { capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'] });
});
afterAll(async () => {
  await browser?.close();
  await system?.close();
});

const getMe = (token?: string) => callApi(system.baseUrl, 'getMe', '/me', token);

describe('consent flow to GET /v1/me', () => {
  let accessToken: string;

  it('issues a self token after login and consent, and /v1/me returns exactly the Me object', async () => {
    const config = await discover({
      authUrl: system.authUrl,
      clientId: tenant.clientId,
      redirectUri: tenant.redirectUri,
    });
    const request = await authorizationRequest(
      config,
      tenant.redirectUri,
      'svc.profile.self.read svc.tenant.info.read',
    );
    let consentText = '';
    const callback = await signInAndConsent(browser, request.url, tenant, 'Allow', async (page) => {
      consentText = await page.locator('body').innerText();
    });
    // The consent page names the app, the tenant and each requested capability with its description.
    expect(consentText).toContain(tenant.clientName);
    expect(consentText).toContain(tenant.tenantName);
    expect(consentText).toContain('svc.profile.self.read');
    expect(consentText).toContain('Read the identity behind this token');
    expect(consentText).toContain('svc.tenant.info.read');

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
    });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    accessToken = tokens.access_token;

    const res = await getMe(accessToken);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
    expect(res.body).toEqual({
      subjectType: 'person',
      subjectId: tenant.personId,
      tenantId: tenant.tenantId,
      clientId: tenant.clientId,
      scopes: ['svc.profile.self.read', 'svc.tenant.info.read'],
      actor: { accountId: tenant.accountId },
    });
  });

  it('answers a call without a token with 401 invalid_token and a Bearer challenge', async () => {
    const res = await getMe();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({
      error: 'invalid_token',
      message: expect.any(String),
      requestId: res.headers.get('x-request-id'),
    });
  });

  it('sends the person back with error=access_denied when they press Deny', async () => {
    const config = await discover({
      authUrl: system.authUrl,
      clientId: tenant.clientId,
      redirectUri: tenant.redirectUri,
    });
    const request = await authorizationRequest(config, tenant.redirectUri, 'svc.profile.self.read');
    const callback = await signInAndConsent(browser, request.url, tenant, 'Deny');
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
  });

  it('denies the next request with 403 capability_not_granted once the tenant withdraws the grant', async () => {
    expect((await getMe(accessToken)).status).toBe(200);
    const admin = adminClient(system);
    expect((await admin.call('DELETE', `/tenants/${tenant.tenantId}/grants/${tenant.clientId}`)).status).toBe(204);
    const res = await getMe(accessToken);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('capability_not_granted');
  });
});
