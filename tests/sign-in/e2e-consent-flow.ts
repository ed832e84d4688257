// What a third-party app does: authorization request with PKCE, the person signs in and consents in a real browser,
// the app exchanges the code with openid-client and calls the API through the gateway.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import * as oidc from 'openid-client';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { authorizationRequest, discover, postTokenForm, signInAndConsent } from '../support/oauth.js';
import { callApi, type CheckedResponse } from '../support/api.js';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { dpopCall, dpopChallenge, dpopKey, makeProof, type DpopKey, type ProofFields } from '../support/dpop.js';
import { rawHeader, rawHttp, rawJson, rawStatus } from '../support/raw-http.js';

describe('e2e-consent-flow', () => {
  let system: System;
  let browser: Browser;
  let tenant: TenantSetup;

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    tenant = await setupTenant(adminClient(system), {
      capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const getMe = (token?: string) => callApi(system.baseUrl, 'getMe', '/me', token);

  /** The bearer token the first flow obtained (a plain public app's). */
  let accessToken: string;

  describe('consent flow to GET /v1/me', () => {
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
      // What the app will see, in the person's words, before the catalogue's description.
      expect(consentText).toContain(`The name of ${tenant.tenantName}`);
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

  // Issue 49: an app registered with the FAPI 2.0 profile (PAR, private_key_jwt, DPoP-bound tokens), driven by
  // openid-client through the real pages; then hand-made proofs (jose) for every refusal at the gateway.
  describe('a fapi2 app: PAR + private_key_jwt + DPoP through the gateway', () => {
    const REDIRECT = 'https://fapi-app.example/callback';
    let app: { clientId: string; config: oidc.Configuration; tenant: TenantSetup };
    let key: DpopKey;
    let tokens: { access_token: string; refresh_token?: string | undefined; token_type: string };

    beforeAll(async () => {
      const admin = adminClient(system);
      const signing = await generateKeyPair('ES256', { extractable: true });
      const client = await admin.checked('createClient', 'POST', `/tenants/${tenant.tenantId}/clients`, {
        slug: 'fapi',
        name: 'FAPI app',
        kind: 'third_party',
        type: 'confidential',
        redirectUris: [REDIRECT],
        securityProfile: 'fapi2',
        jwks: { keys: [{ ...(await exportJWK(signing.publicKey)), kid: 'app-1', alg: 'ES256' }] },
      });
      expect(client.status).toBe(201);
      await admin.ok('PUT', `/tenants/${tenant.tenantId}/grants/${client.body.clientId}`, {
        capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'],
      });
      const config = await oidc.discovery(
        new URL(system.authUrl),
        client.body.clientId,
        undefined,
        oidc.PrivateKeyJwt(signing.privateKey),
        { execute: [oidc.allowInsecureRequests] },
      );
      app = { clientId: client.body.clientId, config, tenant };
      key = await dpopKey();
    });

    /** PAR with a DPoP proof, sign-in and consent in the browser, code exchange with a proof: the app's whole flow. */
    async function authorize(scope: string) {
      const DPoP = oidc.getDPoPHandle(app.config, key);
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = await oidc.buildAuthorizationUrlWithPAR(
        app.config,
        {
          redirect_uri: REDIRECT,
          scope,
          state,
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        },
        { DPoP },
      );
      expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      const callback = await signInAndConsent(browser, url, tenant, 'Allow', undefined, REDIRECT);
      return oidc.authorizationCodeGrant(
        app.config,
        callback,
        { pkceCodeVerifier: verifier, expectedState: state },
        undefined,
        { DPoP },
      );
    }

    it('advertises PAR, DPoP algorithms and private_key_jwt in discovery', async () => {
      const doc = app.config.serverMetadata();
      expect(doc.pushed_authorization_request_endpoint).toBe(`${system.authUrl}/oauth2/par`);
      expect(doc.dpop_signing_alg_values_supported).toContain('ES256');
      expect(doc.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    });

    it('issues a DPoP token bound to the key (cnf.jkt) and /v1/me answers it with a fresh proof', async () => {
      tokens = await authorize('svc.profile.self.read svc.tenant.info.read');
      expect(tokens.token_type.toLowerCase()).toBe('dpop');
      expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: key.jkt });
      const DPoP = oidc.getDPoPHandle(app.config, key);
      const res = await oidc.fetchProtectedResource(
        app.config,
        tokens.access_token,
        new URL(`${system.baseUrl}/me`),
        'GET',
        undefined,
        undefined,
        { DPoP },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ subjectId: tenant.personId, clientId: app.clientId });
    });

    it('refreshes with a proof (strict rotation kept), and refuses a refresh without one: invalid_grant', async () => {
      const DPoP = oidc.getDPoPHandle(app.config, key);
      const refreshed = await oidc.refreshTokenGrant(app.config, tokens.refresh_token!, undefined, { DPoP });
      expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt: key.jkt });
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      const refused = await oidc.refreshTokenGrant(app.config, refreshed.refresh_token!).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(oidc.ResponseBodyError);
      expect((refused as oidc.ResponseBodyError).error).toBe('invalid_grant');
    });

    it('refuses an authorization request that was not pushed', async () => {
      const url = oidc.buildAuthorizationUrl(app.config, {
        redirect_uri: REDIRECT,
        scope: 'svc.profile.self.read',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const res = await fetch(url, { redirect: 'manual' });
      // Sent back to the app with the error, never on to the sign-in page.
      const location = new URL(res.headers.get('location')!, system.authUrl);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('invalid_request');
    });

    it('refuses a client secret from a private_key_jwt app: invalid_client', async () => {
      const res = await postTokenForm(system.authUrl, {
        grant_type: 'refresh_token',
        client_id: app.clientId,
        client_secret: 'not-a-secret-this-app-could-have-0123456789',
        refresh_token: 'whatever',
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client');
    });

    describe('hand-made proofs at the gateway', () => {
      const meUrl = () => `${system.baseUrl}/me`;
      const proofFor = (overrides: Partial<ProofFields> = {}, signer = key) =>
        makeProof(signer, { htm: 'GET', htu: meUrl(), token: tokens.access_token, ...overrides });
      const getMeWith = (proof: string | undefined, scheme?: string) =>
        dpopCall(system.baseUrl, 'getMe', '/me', tokens.access_token, proof, { scheme });
      /** 401 invalid_token, the Problem the contract has, and RFC 9449's challenge naming `error`. */
      const expectRefused = (res: CheckedResponse, error = 'invalid_dpop_proof') => {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({
          error: 'invalid_token',
          message: expect.any(String),
          requestId: res.headers.get('x-request-id'),
        });
        const header = res.headers.get('www-authenticate');
        expect(header).toMatch(/^Bearer error="invalid_token", DPoP /);
        expect(dpopChallenge(header)).toMatchObject({ error, algs: expect.stringContaining('ES256') });
      };

      beforeAll(async () => {
        tokens = await authorize('svc.profile.self.read');
      });

      it('accepts a valid proof once (the query is not part of htu), and refuses its replay', async () => {
        const proof = await proofFor();
        const first = await dpopCall(system.baseUrl, 'getMe', '/me?probe=1', tokens.access_token, proof);
        expect(first.status).toBe(200);
        expectRefused(await getMeWith(proof));
      });

      it.each<[string, () => Promise<string>]>([
        ['signed by another key (its own jwk in the header)', async () => proofFor({}, await dpopKey())],
        ['naming the token key but signed by another', async () => proofFor({ jwk: key.publicJwk }, await dpopKey())],
        ['for another method', () => proofFor({ htm: 'DELETE' })],
        ['for another URL', () => proofFor({ htu: `${system.baseUrl}/tenant` })],
        ['for another host', () => proofFor({ htu: meUrl().replace('127.0.0.1', 'localhost') })],
        ['issued an hour ago', () => proofFor({ iat: Math.floor(Date.now() / 1000) - 3600 })],
        ['issued ten minutes ahead', () => proofFor({ iat: Math.floor(Date.now() / 1000) + 600 })],
        ['without ath', () => proofFor({ token: undefined })],
        ['for another token (ath)', () => proofFor({ token: `${tokens.access_token}x` })],
        ['with typ JWT', () => proofFor({ typ: 'JWT' })],
        ['with a private key in its jwk', () => proofFor({ jwk: { ...key.publicJwk, d: 'AAAA' } })],
        ['signed with an algorithm off the list (ES512)', async () => proofFor({}, await dpopKey('ES512'))],
        ['not a JWS', async () => 'not-a-proof'],
        ['a JWS of garbage', async () => 'e30.e30.e30'],
        ['unsigned (alg none)', async () => `${b64({ alg: 'none', typ: 'dpop+jwt' })}.${b64({ htm: 'GET' })}.`],
        ['of 10,000 characters', async () => `${'a'.repeat(5000)}.${'b'.repeat(4998)}.c`],
      ])('refuses a proof %s: 401 invalid_token, DPoP error="invalid_dpop_proof"', async (_name, make) => {
        expectRefused(await getMeWith(await make()));
      });

      it('refuses a bound token without a proof, and one sent with the Bearer scheme', async () => {
        expectRefused(await getMeWith(undefined));
        expectRefused(await getMeWith(await proofFor(), 'Bearer'), 'invalid_token');
      });

      it('refuses two DPoP headers, even if each is a valid proof', async () => {
        const { host } = new URL(system.baseUrl);
        const answer = await rawHttp(
          system.baseUrl,
          `GET /v1/me HTTP/1.1\r\nHost: ${host}\r\nAuthorization: DPoP ${tokens.access_token}\r\n` +
            `DPoP: ${await proofFor()}\r\nDPoP: ${await proofFor()}\r\nConnection: close\r\n\r\n`,
        );
        expect(rawStatus(answer)).toBe(401);
        expect(rawJson(answer)).toMatchObject({ error: 'invalid_token' });
        expect(dpopChallenge(rawHeader(answer, 'www-authenticate') ?? null)).toMatchObject({
          error: 'invalid_dpop_proof',
        });
      });

      it("answers a DPoP header past Node's header limit as any oversized head: 431, a Problem, never a 500", async () => {
        const { host } = new URL(system.baseUrl);
        const answer = await rawHttp(
          system.baseUrl,
          `GET /v1/me HTTP/1.1\r\nHost: ${host}\r\nAuthorization: DPoP ${tokens.access_token}\r\n` +
            `DPoP: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
        );
        expect(rawStatus(answer)).toBe(431);
        expect(rawJson(answer)).toMatchObject({ error: 'payload_too_large' });
      });

      it('refuses the DPoP scheme with a bearer token (no cnf)', async () => {
        const res = await dpopCall(system.baseUrl, 'getMe', '/me', accessToken, await proofFor({ token: accessToken }));
        expectRefused(res, 'invalid_token');
      });
    });
  });

  describe('a public app that sends DPoP proofs without registering anything', () => {
    it("gets DPoP tokens, and its refresh token is bound to the key: another key's proof is invalid_grant", async () => {
      const admin = adminClient(system);
      const client = await admin.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
        slug: 'spa-dpop',
        name: 'SPA with DPoP',
        kind: 'third_party',
        type: 'public',
        redirectUris: [tenant.redirectUri],
      });
      await admin.ok('PUT', `/tenants/${tenant.tenantId}/grants/${client.clientId}`, {
        capabilities: ['svc.profile.self.read'],
      });
      const config = await discover({
        authUrl: system.authUrl,
        clientId: client.clientId,
        redirectUri: tenant.redirectUri,
      });
      const [key, otherKey] = await Promise.all([dpopKey(), dpopKey()]);
      const DPoP = oidc.getDPoPHandle(config, key);
      const request = await authorizationRequest(config, tenant.redirectUri, 'svc.profile.self.read');
      const callback = await signInAndConsent(browser, request.url, tenant);
      const tokens = await oidc.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: request.verifier, expectedState: request.state },
        undefined,
        { DPoP },
      );
      expect(tokens.token_type.toLowerCase()).toBe('dpop');
      expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: key.jkt });

      const stolen = await oidc
        .refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: oidc.getDPoPHandle(config, otherKey) })
        .catch((e: unknown) => e);
      expect(stolen).toBeInstanceOf(oidc.ResponseBodyError);
      expect((stolen as oidc.ResponseBodyError).error).toBe('invalid_grant');
      const bare = await oidc.refreshTokenGrant(config, tokens.refresh_token!).catch((e: unknown) => e);
      expect((bare as oidc.ResponseBodyError).error).toBe('invalid_grant');
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
      expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt: key.jkt });
    });
  });

  /** base64url of a JSON value, for hand-written JWS segments. */
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
});
