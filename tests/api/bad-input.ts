// Bad input never gets a 500 or a retryable 503: a NUL character (which PostgreSQL cannot store) and malformed
// escapes at the token endpoint, the authorize endpoint, the login form and the API; bodies that do not decode,
// requests Node's HTTP parser refuses and expectations Node would answer 417 itself.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupMachineClient, setupTenant, type TenantSetup } from '../support/admin.js';
import { appRedirectUri } from '../support/app-callback.js';
import { launchBrowser } from '../support/browser.js';
import { rawHeader, rawHttp, rawJson, rawStatus } from '../support/raw-http.js';
import { authorizationRequest, clientCredentialsToken, discover, postTokenForm } from '../support/oauth.js';

describe('bad-input', () => {
  let system: System;
  let browser: Browser;
  let tenant: TenantSetup;
  beforeAll(async () => {
    [system, browser] = await Promise.all([
      startTestSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' }),
      launchBrowser(),
    ]);
    tenant = await setupTenant(adminClient(system));
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const tokenRequest = async (form: Record<string, string>) =>
    (await postTokenForm(system.authUrl, form)).body as { error: string };

  describe('client authentication', () => {
    it('refuses an empty client_secret from a public client with invalid_client', async () => {
      const body = await tokenRequest({
        grant_type: 'refresh_token',
        client_id: tenant.clientId,
        client_secret: '',
        refresh_token: 'x',
      });
      expect(body.error).toBe('invalid_client');
    });

    it('answers a bare "Authorization: Basic" (no credentials after it) with 401 invalid_client and a Basic challenge', async () => {
      const res = await fetch(`${system.authUrl}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: 'Basic', 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=refresh_token&client_id=${tenant.clientId}&refresh_token=x`,
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
    });
  });

  describe('a token request body the endpoint cannot read', () => {
    it.each([
      [
        'over 56 KiB',
        'application/x-www-form-urlencoded',
        `grant_type=refresh_token&refresh_token=${'x'.repeat(60_000)}`,
      ],
      [
        'in a charset it does not know',
        'application/x-www-form-urlencoded; charset=no-such-charset',
        'grant_type=refresh_token&refresh_token=x',
      ],
    ])('%s is 400 invalid_grant, a TokenError', async (_name, contentType, body) => {
      const res = await fetch(`${system.authUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 400,
        body: { error: 'invalid_grant', error_description: 'malformed request body' },
      });
    });
  });

  describe('a token or revocation request body whose content-encoding does not decode', () => {
    it.each([
      ['/oauth2/token', 'gzip'],
      ['/oauth2/token', 'br'],
      ['/oauth2/token', 'deflate'],
      ['/oauth2/revoke', 'gzip'],
    ])('%s with %s: 400 invalid_grant, a TokenError (not a retryable 429)', async (path, encoding) => {
      const res = await fetch(`${system.authUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': encoding },
        body: `grant_type=refresh_token&client_id=${tenant.clientId}&refresh_token=x&token=x`,
      });
      expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toEqual({
        status: 400,
        retryAfter: null,
        body: { error: 'invalid_grant', error_description: 'malformed request body' },
      });
    });
  });

  describe("requests Node's HTTP parser refuses at the issuer", () => {
    it.each([
      ['/oauth2/token', 'oversized headers', `x-big: ${'a'.repeat(20_000)}\r\n`],
      ['/oauth2/revoke', 'oversized headers', `x-big: ${'a'.repeat(20_000)}\r\n`],
      ['/oauth2/token', 'a malformed content-length', 'content-length: abc\r\n'],
      ['/oauth2/token', 'both content-length and chunked', 'content-length: 5\r\ntransfer-encoding: chunked\r\n'],
    ])('%s, %s: 400 TokenError invalid_grant with x-request-id', async (path, _name, headers) => {
      const answer = await rawHttp(
        system.authUrl,
        `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\n${headers}\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(rawHeader(answer, 'x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(rawHeader(answer, 'content-type')).toBe('application/json');
      expect(rawJson(answer)).toEqual({
        error: 'invalid_grant',
        error_description: 'malformed request',
      });
    });
  });

  describe('an Expect header other than 100-continue', () => {
    // fetch refuses to send one, so the requests are written out (Node would answer them 417 with nothing else).
    it('is ignored: the gateway, the token endpoint and the admin API answer as without it, with x-request-id', async () => {
      const gatewayPath = `${new URL(system.baseUrl).pathname}/tenant`;
      const api = await rawHttp(
        system.baseUrl,
        `GET ${gatewayPath} HTTP/1.1\r\nhost: x\r\nexpect: foo\r\nconnection: close\r\n\r\n`,
      );
      expect({ status: rawStatus(api), error: rawJson(api).error }).toEqual({ status: 401, error: 'invalid_token' });
      expect(rawHeader(api, 'x-request-id')).toBeTruthy();

      const form = `grant_type=refresh_token&client_id=${tenant.clientId}&refresh_token=x`;
      const token = await rawHttp(
        system.authUrl,
        `POST /oauth2/token HTTP/1.1\r\nhost: x\r\nexpect: foo\r\nconnection: close\r\n` +
          `content-type: application/x-www-form-urlencoded\r\ncontent-length: ${form.length}\r\n\r\n${form}`,
      );
      expect({ status: rawStatus(token), error: rawJson(token).error }).toEqual({
        status: 400,
        error: 'invalid_grant',
      });

      const admin = await rawHttp(
        system.pdpUrl,
        `GET /admin/v1/tenants HTTP/1.1\r\nhost: x\r\nexpect: foo\r\nconnection: close\r\n` +
          `authorization: Bearer ${system.adminToken}\r\n\r\n`,
      );
      expect(rawStatus(admin)).toBe(200);
      expect(rawHeader(admin, 'x-request-id')).toBeTruthy();
    });
  });

  describe('a long URL the gateway accepts', () => {
    it('reaches the backend (which takes what the gateway forwards): 200, not its parser 431 with another request id', async () => {
      const machine = await setupMachineClient(adminClient(system), { grant: ['svc.tenant.info.read'] });
      const token = await clientCredentialsToken(system.authUrl, machine, 'svc.tenant.info.read');
      const res = await fetch(`${system.baseUrl}/tenant?q=${'a'.repeat(12_000)}`, {
        headers: { authorization: `Bearer ${token}`, 'x-request-id': 'bad-input-long-url' },
      });
      expect({ status: res.status, requestId: res.headers.get('x-request-id') }).toEqual({
        status: 200,
        requestId: 'bad-input-long-url',
      });
    });
  });

  describe('a token request body with no content type', () => {
    it('is 400 invalid_grant, not read as an empty form (which would say grant_type is missing)', async () => {
      const res = await fetch(`${system.authUrl}/oauth2/token`, {
        method: 'POST',
        // Bytes: fetch names no content type for them.
        body: new TextEncoder().encode(`grant_type=refresh_token&client_id=${tenant.clientId}&refresh_token=x`),
      });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect({ status: res.status, error: ((await res.json()) as { error: string }).error }).toEqual({
        status: 400,
        error: 'invalid_grant',
      });
    });
  });

  describe('NUL characters', () => {
    it.each([
      [
        'a code',
        {
          grant_type: 'authorization_code',
          code: 'abc\u0000',
          code_verifier: 'v'.repeat(43),
          redirect_uri: appRedirectUri(),
        },
        'invalid_grant',
      ],
      ['a refresh token', { grant_type: 'refresh_token', refresh_token: '\u0000' }, 'invalid_grant'],
    ])('in %s at the token endpoint answer a TokenError', async (_name, form, error) => {
      expect((await tokenRequest({ client_id: tenant.clientId, ...form })).error).toBe(error);
    });

    it('in a client id at the token endpoint answer invalid_client', async () => {
      const body = await tokenRequest({
        grant_type: 'refresh_token',
        client_id: `${tenant.clientId}\u0000`,
        refresh_token: 'x',
      });
      expect(body.error).toBe('invalid_client');
    });

    it('in a client id at the authorize endpoint never answer 5xx', async () => {
      const url = new URL(`${system.authUrl}/oauth2/authorize`);
      url.search = new URLSearchParams({
        client_id: `${tenant.clientId}\u0000`,
        response_type: 'code',
        redirect_uri: tenant.redirectUri,
        scope: 'svc.profile.self.read',
      }).toString();
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBeLessThan(500);
    });

    it('in the login username give the generic sign-in failure, not an error page', async () => {
      const config = await discover({
        authUrl: system.authUrl,
        clientId: tenant.clientId,
        redirectUri: tenant.redirectUri,
      });
      const request = await authorizationRequest(config, tenant.redirectUri, 'svc.profile.self.read');
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(request.url.toString());
        await page.locator('input[name="username"]').fill(`${tenant.username}\u0000`);
        await page.locator('input[name="password"]').fill(tenant.password);
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST'),
          page.locator('form button').click(),
        ]);
        expect(response.status()).toBe(401);
        expect(await page.locator('input[name="username"]').count()).toBe(1);
      } finally {
        await context.close();
      }
    });
  });
});
