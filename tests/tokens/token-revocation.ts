// RFC 7009 token revocation for apps (platform-interfaces.md "Token revocation, for clients"): a client revokes its own
// refresh or access token and the whole family ends (refresh invalid_grant, API 403 subject_revoked); anything else is
// 200 with no effect; client authentication, CORS and errors are the token endpoint's. Driven by openid-client.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { basicAuth, discover, obtainTokens, type Tokens } from '../support/oauth.js';
import { callApi } from '../support/api.js';
import { expectProblem } from '../support/problems.js';
import { assertResponseMatches, captureResponse } from '../support/openapi.js';

describe('token-revocation', () => {
  const SCOPE = 'svc.profile.self.read';
  const ORIGIN = 'https://app.example';

  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  let app: TenantSetup;
  let other: TenantSetup & { clientSecret: string };
  let config: oidc.Configuration;

  const getMe = (token: string) => callApi(system.baseUrl, 'getMe', '/me', token);
  const signIn = (): Promise<Tokens> => obtainTokens(browser, { authUrl: system.authUrl, ...app }, app, SCOPE);
  /** The refresh grant's error code, or 'ok'. */
  async function refresh(token: string): Promise<string> {
    try {
      await oidc.refreshTokenGrant(config, token);
      return 'ok';
    } catch (err) {
      return (err as { error?: string }).error ?? String(err);
    }
  }
  /** POST /oauth2/revoke by hand (for what a client library will not send), held to token-api.yaml. */
  async function revokeForm(form: Record<string, string> | string, headers: Record<string, string> = {}) {
    const res = await fetch(`${system.authUrl}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
    const body = assertResponseMatches('token', 'revokeToken', await captureResponse(res));
    return { status: res.status, headers: res.headers, body: body as { error?: string } | string | undefined };
  }

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    admin = adminClient(system);
    app = await setupTenant(admin, { capabilities: [SCOPE] });
    other = (await setupTenant(admin, { capabilities: [SCOPE], type: 'confidential' })) as typeof other;
    config = await discover({ authUrl: system.authUrl, ...app });
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  describe('POST /oauth2/revoke', () => {
    it('is advertised in discovery as revocation_endpoint', async () => {
      const document = await (await fetch(`${system.authUrl}/.well-known/openid-configuration`)).json();
      expect(document.revocation_endpoint).toBe(`${system.authUrl}/oauth2/revoke`);
      expect(config.serverMetadata().revocation_endpoint).toBe(`${system.authUrl}/oauth2/revoke`);
    });

    it(
      'ends the whole family when the app revokes its refresh token: ' +
        'refresh invalid_grant, API 403 subject_revoked',
      async () => {
        const tokens = await signIn();
        expect((await getMe(tokens.access_token)).status).toBe(200);
        await oidc.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
        expect(await refresh(tokens.refresh_token!)).toBe('invalid_grant');
        expectProblem(await getMe(tokens.access_token), 403, 'subject_revoked');
      },
    );

    it('ends the whole family when the app revokes its access token', async () => {
      const tokens = await signIn();
      await oidc.tokenRevocation(config, tokens.access_token, { token_type_hint: 'access_token' });
      expectProblem(await getMe(tokens.access_token), 403, 'subject_revoked');
      expect(await refresh(tokens.refresh_token!)).toBe('invalid_grant');
    });

    it(
      "answers 200 and changes nothing for another client's tokens, " + 'unknown tokens and tokens already revoked',
      async () => {
        const tokens = await signIn();
        const asOther = { authorization: basicAuth(other.clientId, other.clientSecret) };
        for (const token of [tokens.refresh_token!, tokens.access_token, 'no-such-token', 'a.b.c']) {
          // An empty 200 (the document declares no body for it, so any body fails revokeForm).
          expect({ token, status: (await revokeForm({ token }, asOther)).status }).toEqual({ token, status: 200 });
        }
        expect((await getMe(tokens.access_token)).status).toBe(200);
        const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
        await oidc.tokenRevocation(config, rotated.refresh_token!);
        expect((await revokeForm({ token: rotated.refresh_token!, client_id: app.clientId })).status).toBe(200);
      },
    );

    it(
      'refuses wrong client credentials as the token endpoint does: ' + '401 invalid_client with Basic, 400 without',
      async () => {
        const basic = await revokeForm({ token: 'x' }, { authorization: basicAuth(other.clientId, 'wrong secret') });
        expect([basic.status, (basic.body as { error: string }).error]).toEqual([401, 'invalid_client']);
        expect(basic.headers.get('www-authenticate')).toMatch(/^Basic /);
        const post = await revokeForm({ token: 'x', client_id: other.clientId, client_secret: 'wrong secret' });
        expect([post.status, (post.body as { error: string }).error]).toEqual([400, 'invalid_client']);
      },
    );

    it('answers a malformed request with a TokenError of the contract', async () => {
      const forms = [`client_id=${app.clientId}`, `client_id=${app.clientId}&token=x&token=y`, 'token=x'];
      for (const form of forms) {
        const res = await revokeForm(form);
        expect({ form, status: res.status }).toEqual({ form, status: 400 });
        expect(['invalid_client', 'invalid_grant', 'invalid_scope', 'unsupported_grant_type']).toContain(
          (res.body as { error: string }).error,
        );
      }
    });

    it('gives CORS headers only to an origin the public client registered', async () => {
      const browserApp = await admin.ok('POST', `/tenants/${app.tenantId}/clients`, {
        slug: 'spa',
        name: 'SPA',
        kind: 'third_party',
        type: 'public',
        redirectUris: [app.redirectUri],
        allowedOrigins: [ORIGIN],
      });
      const preflight = (origin: string) =>
        fetch(`${system.authUrl}/oauth2/revoke`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST' },
        });
      expect((await preflight(ORIGIN)).headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect((await preflight('https://elsewhere.example')).headers.get('access-control-allow-origin')).toBeNull();
      const allowed = await revokeForm({ token: 'x', client_id: browserApp.clientId }, { origin: ORIGIN });
      expect([allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([200, ORIGIN]);
      // Another origin gets no CORS headers (and oidc-provider refuses the cross-origin call: 400 TokenError).
      const refused = await revokeForm(
        { token: 'x', client_id: browserApp.clientId },
        { origin: 'https://elsewhere.example' },
      );
      expect([refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([400, null]);
    });
  });
});
