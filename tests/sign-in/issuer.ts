// The issuer on its own, against a fresh database: discovery, the authorization code flow with PKCE driven by a
// real OAuth client (openid-client) and a real browser (Chromium via playwright-core) for the login and consent
// pages, the access token's shape, refresh rotation and replay, and the token endpoint's strict TokenError answers
// (contract §4.1, §7.1). Token, discovery and key-set responses are held to docs/openapi/token-api.yaml.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import * as client from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Knex } from 'knex';
import type { Browser, Page } from 'playwright-core';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { loadConfig } from '../../common/config.js';
import { migrate, type Database } from '../../common/db.js';
import { listen, type Listening } from '../../common/http.js';
import { newId } from '../../common/ids.js';
import { createLogger } from '../../common/log.js';
import { hashSecret } from '../../common/secrets.js';
import { createIssuerApp } from '../../issuer/app.js';
import { appRedirectUri } from '../support/app-callback.js';
import { keepingPageOnFailure, launchBrowser } from '../support/browser.js';
import { freshDatabase } from '../support/database.js';
import { createTelemetry } from '../../common/telemetry.js';
import { authorizationRequest, basicAuth, discover, postTokenForm, signInAndConsent } from '../support/oauth.js';
import { assertResponseMatches, captureResponse, type ApiResponse } from '../support/openapi.js';

describe('issuer', () => {
  const TOKEN_ERRORS = ['invalid_client', 'invalid_grant', 'invalid_scope', 'unsupported_grant_type'];
  const REDIRECT_URI = appRedirectUri();
  const SCOPE = 'svc.profile.self.read svc.tenant.info.read';
  const LOGIN_FAILED = 'Those sign-in details did not work';

  let db: Database;
  let server: Listening;
  let url: string;
  let knex: Knex;
  let browser: Browser;

  const seed = {
    tenantId: newId('ten'),
    tenantName: 'Acme Learning',
    personId: newId('psn'),
    accountId: newId('acc'),
    username: `alice-${randomBytes(3).toString('hex')}`,
    password: 'correct horse battery staple',
    outsiderUsername: `mallory-${randomBytes(3).toString('hex')}`,
    publicClientId: 'tp_acme_notes',
    appName: 'Acme Notes',
    confidentialClientId: 'tp_acme_sync',
    clientSecret: randomBytes(24).toString('base64url'),
    disposableClientId: 'tp_acme_disposable',
  };
  const person = { username: seed.username, password: seed.password };

  async function seedData() {
    const passwordHash = await hashSecret(seed.password);
    const outsiderPerson = newId('psn');
    await knex('tenants').insert({ id: seed.tenantId, label: 'acme', display_name: seed.tenantName, plan: 'L2' });
    await knex('persons').insert([
      { id: seed.personId, display_name: 'Alice' },
      { id: outsiderPerson, display_name: 'Mallory' },
    ]);
    await knex('tenant_person_relationships').insert({ tenant_id: seed.tenantId, person_id: seed.personId });
    await knex('accounts').insert([
      {
        id: seed.accountId,
        tenant_id: seed.tenantId,
        kind: 'person',
        person_id: seed.personId,
        username: seed.username,
        password_hash: passwordHash,
      },
      // Valid credentials but no relationship with the tenant: must not be able to sign in here.
      {
        id: newId('acc'),
        tenant_id: seed.tenantId,
        kind: 'person',
        person_id: outsiderPerson,
        username: seed.outsiderUsername,
        password_hash: passwordHash,
      },
    ]);
    const clientRow = (id: string, type: string, name: string) => ({
      id,
      tenant_id: seed.tenantId,
      slug: id.split('_')[2],
      name,
      kind: 'third_party',
      type,
      redirect_uris: JSON.stringify([REDIRECT_URI]),
    });
    await knex('clients').insert([
      clientRow(seed.publicClientId, 'public', seed.appName),
      clientRow(seed.confidentialClientId, 'confidential', 'Acme Sync'),
      clientRow(seed.disposableClientId, 'public', 'Acme Disposable'),
    ]);
    await knex('client_secrets').insert({
      id: newId('key'),
      client_id: seed.confidentialClientId,
      secret_hash: await hashSecret(seed.clientSecret),
      state: 'current',
    });
    const grants = (clientId: string, caps: string[]) =>
      caps.map((c) => ({ tenant_id: seed.tenantId, client_id: clientId, capability_id: c }));
    await knex('tenant_grants').insert([
      ...grants(seed.publicClientId, ['svc.profile.self.read', 'svc.tenant.info.read']),
      ...grants(seed.confidentialClientId, ['svc.profile.self.read']),
      ...grants(seed.disposableClientId, ['svc.profile.self.read']),
    ]);
  }

  async function startIssuer() {
    db = await freshDatabase();
    knex = db.knex;
    await migrate(knex);
    await seedData();
    // Listen first to learn the URL, which is the issuer identifier.
    const http = await listen(0);
    server = http;
    url = http.url;
    const config = loadConfig({ ...process.env, AUTH_URL: url, LOG_LEVEL: 'silent' });
    const { app } = await createIssuerApp({
      knex,
      config,
      log: createLogger('issuer', 'silent'),
      telemetry: createTelemetry(),
    });
    http.server.on('request', app);
  }

  beforeAll(async () => {
    // Both settle before a failure is reported, so afterAll can close whatever did start.
    const started = await Promise.allSettled([
      launchBrowser().then((b) => {
        browser = b;
      }),
      startIssuer(),
    ]);
    for (const result of started) if (result.status === 'rejected') throw result.reason;
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await db?.close();
  });

  // ---- helpers -------------------------------------------------------------------------------------------------

  /** Every token endpoint answer openid-client receives is held to the document as well; `seen` gets a copy. */
  function holdTokenResponsesToDocument(config: client.Configuration, seen?: (res: ApiResponse) => void) {
    config[client.customFetch] = async (input, init) => {
      const res = await fetch(input, init as RequestInit);
      if (new URL(input).pathname === '/oauth2/token') {
        const captured = await captureResponse(res.clone());
        assertResponseMatches('token', 'issueToken', captured);
        seen?.(captured);
      }
      return res;
    };
  }

  interface Started {
    config: client.Configuration;
    authUrl: URL;
    verifier: string;
    state: string;
  }

  /** The app's side: discovery and an authorization URL with PKCE (S256) and state; nothing is opened yet. */
  async function startAuthorization(clientId: string, scope = SCOPE, secret?: string): Promise<Started> {
    const config = await discover({ authUrl: url, clientId, clientSecret: secret, redirectUri: REDIRECT_URI });
    holdTokenResponsesToDocument(config);
    const { url: authUrl, verifier, state } = await authorizationRequest(config, REDIRECT_URI, scope);
    return { config, authUrl, verifier, state };
  }

  /** Authorization, then sign-in and Allow in the browser: the code the app was sent back with. */
  async function authorizationCode(clientId = seed.publicClientId, scope = SCOPE, secret?: string) {
    const started = await startAuthorization(clientId, scope, secret);
    const callback = await signInAndConsent(browser, started.authUrl, person, 'Allow');
    const code = callback.searchParams.get('code');
    if (!code) throw new Error(`expected a code, was sent back to ${callback.href}`);
    return { ...started, callback, code };
  }

  /** A page in a browser context of its own (its own cookies), closed afterwards. */
  async function inNewPage<T>(use: (page: Page) => Promise<T>): Promise<T> {
    const context = await browser.newContext();
    try {
      return await use(await context.newPage());
    } finally {
      await context.close();
    }
  }

  /** Where /oauth2/authorize sends the browser straight away (no page shown), read from the Location header. */
  async function authorizeRedirect(scope: string): Promise<URL> {
    const { authUrl, state } = await startAuthorization(seed.publicClientId, scope);
    const res = await fetch(authUrl, { redirect: 'manual' });
    expect([302, 303]).toContain(res.status);
    const location = new URL(res.headers.get('location') ?? '', url);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('state')).toBe(state);
    return location;
  }

  /** GET of a discovery-tagged issuer resource, held to the document; returns the parsed body. */
  async function getDocumented(operationId: 'getDiscovery' | 'getJwks', target: string) {
    const res = await fetch(target);
    expect(res.status).toBe(200);
    return assertResponseMatches('token', operationId, await captureResponse(res)) as Record<string, unknown>;
  }

  /** Every error answer from the token endpoint in this suite, checked against the TokenError shape at the end. */
  const errorBodies: unknown[] = [];

  /** A raw form post to the token endpoint (of `base`, default this issuer); the answer is held to the document. */
  async function postToken(form: Record<string, string>, headers: Record<string, string> = {}, base = url) {
    const answer = await postTokenForm(base, form, { accept: 'application/json', ...headers });
    if (answer.status >= 400) errorBodies.push(answer.body);
    return answer;
  }

  function expectTokenError(
    r: { status: number; headers: Headers; body: Record<string, unknown> },
    status: number,
    error: string,
  ) {
    expect({ status: r.status, error: r.body.error }).toEqual({ status, error });
    expect(TOKEN_ERRORS).toContain(r.body.error);
    expect(Object.keys(r.body).every((k) => k === 'error' || k === 'error_description')).toBe(true);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  }

  // ---- tests ---------------------------------------------------------------------------------------------------

  describe('discovery', () => {
    it('advertises only authorization_code and refresh_token, S256 PKCE and the five capabilities', async () => {
      const doc = await getDocumented('getDiscovery', `${url}/.well-known/openid-configuration`);
      expect(doc).toMatchObject({
        issuer: url,
        authorization_endpoint: `${url}/oauth2/authorize`,
        token_endpoint: `${url}/oauth2/token`,
        jwks_uri: `${url}/.well-known/jwks.json`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
      });
      expect([...(doc.scopes_supported as string[])].sort()).toEqual([
        'svc.person.metadata.read',
        'svc.person.metadata.write',
        'svc.person.read',
        'svc.profile.self.read',
        'svc.tenant.info.read',
      ]);
      for (const oidcOnly of [
        'claims_supported',
        'id_token_signing_alg_values_supported',
        'subject_types_supported',
        'userinfo_endpoint',
        'end_session_endpoint',
      ])
        expect(doc).not.toHaveProperty(oidcOnly);
    });

    it('publishes only public EC P-256 keys at jwks_uri', async () => {
      const { keys } = (await getDocumented('getJwks', `${url}/.well-known/jwks.json`)) as {
        keys: Record<string, unknown>[];
      };
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) {
        expect(k).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
        expect(k).not.toHaveProperty('d');
      }
    });
  });

  describe('authorization code flow', () => {
    let tokens: client.TokenEndpointResponse;
    let tokenHeaders: Headers | undefined;
    let flow: Awaited<ReturnType<typeof authorizationCode>>;

    beforeAll(async () => {
      flow = await authorizationCode();
      // Keep the raw token response headers while openid-client does the exchange.
      holdTokenResponsesToDocument(flow.config, (res) => {
        tokenHeaders = res.headers as Headers;
      });
      tokens = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
    });

    it('shows the app, the tenant and each requested capability with its description on the consent page', async () => {
      const { authUrl } = await startAuthorization(seed.publicClientId);
      const consent = { text: '', capabilities: [] as string[], buttons: [] as string[] };
      await signInAndConsent(browser, authUrl, person, 'Deny', async (page) => {
        consent.text = await page.locator('main').innerText();
        consent.capabilities = await page.getByRole('listitem').allInnerTexts();
        consent.buttons = await page.locator('form').getByRole('button').allInnerTexts();
      });
      expect(consent.text).toContain(seed.appName);
      expect(consent.text).toContain(seed.tenantName);
      expect([...consent.capabilities].sort()).toEqual([
        // What the app will see leads, in plain words; the catalogue's description and the id follow in small type.
        expect.stringMatching(
          new RegExp(
            `^That it is you: the identifier of your account at ${seed.tenantName} \\(not your name, username, email or ` +
              'password\\)\\s+Read the identity behind this token · svc\\.profile\\.self\\.read$',
          ),
        ),
        expect.stringMatching(
          new RegExp(
            `^The name of ${seed.tenantName}\\s+Read the tenant's public identity · svc\\.tenant\\.info\\.read$`,
          ),
        ),
      ]);
      expect(consent.buttons).toEqual(['Allow', 'Deny']);
    });

    it('answers the exchange with a Bearer token, expires_in 900, a refresh token and cache-control no-store', () => {
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBe(900);
      expect(tokens.scope).toBe(SCOPE);
      expect(tokens.refresh_token).toEqual(expect.any(String));
      expect(tokens).not.toHaveProperty('id_token');
      expect(tokenHeaders?.get('cache-control')).toBe('no-store');
    });

    it('issues an ES256 at+jwt with a kid that verifies against the JWKS', async () => {
      expect(decodeProtectedHeader(tokens.access_token)).toEqual({
        alg: 'ES256',
        typ: 'at+jwt',
        kid: expect.any(String),
      });
      const jwks = createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(tokens.access_token, jwks, {
        issuer: url,
        audience: 'svc-api',
        typ: 'at+jwt',
        algorithms: ['ES256'],
      });
      expect(payload.sub).toBe(seed.personId);
    });

    it('carries exactly the platform claims, with sid = the grant id of the session row', async () => {
      const claims = decodeJwt(tokens.access_token);
      expect(Object.keys(claims).sort()).toEqual([
        'actor_account_id',
        'actor_epoch',
        'aud',
        'client_id',
        'exp',
        'iat',
        'iss',
        'jti',
        'profile',
        'scope',
        'sid',
        'sub',
        'tenant_id',
      ]);
      expect(claims).toMatchObject({
        iss: url,
        aud: 'svc-api',
        sub: seed.personId,
        client_id: seed.publicClientId,
        scope: SCOPE,
        profile: 'self',
        tenant_id: seed.tenantId,
        actor_account_id: seed.accountId,
        actor_epoch: 1,
      });
      expect(claims.sub).toMatch(/^psn_[0-9a-hjkmnp-tv-z]{26}$/);
      expect(claims.actor_account_id).toMatch(/^acc_/);
      expect(Number.isInteger(claims.actor_epoch)).toBe(true);
      expect(claims.exp! - claims.iat!).toBe(900);
      expect(claims.jti).toEqual(expect.any(String));
      const session = await knex('sessions')
        .where('id', claims.sid as string)
        .first();
      expect(session).toMatchObject({ account_id: seed.accountId, client_id: seed.publicClientId, revoked_at: null });
      expect(
        await knex('oidc_payloads')
          .where({ model: 'Grant', id: claims.sid as string })
          .first(),
      ).toBeTruthy();
    });

    it('grants only the requested capabilities that the client may receive', async () => {
      const other = await authorizationCode(seed.publicClientId, 'svc.profile.self.read svc.person.read');
      const t = await client.authorizationCodeGrant(other.config, other.callback, {
        pkceCodeVerifier: other.verifier,
        expectedState: other.state,
      });
      expect(t.scope).toBe('svc.profile.self.read');
      expect(decodeJwt(t.access_token).scope).toBe('svc.profile.self.read');
    });

    it('answers a second redemption of the same code with 400 invalid_grant', async () => {
      const r = await postToken({
        grant_type: 'authorization_code',
        client_id: seed.publicClientId,
        code: flow.code,
        code_verifier: flow.verifier,
        redirect_uri: REDIRECT_URI,
      });
      expectTokenError(r, 400, 'invalid_grant');
    });

    it(
      'answers a raw form code exchange with 200, ' + "the documented TokenResponse and the caller's x-request-id",
      async () => {
        const raw = await authorizationCode();
        const r = await postToken(
          {
            grant_type: 'authorization_code',
            client_id: seed.publicClientId,
            code: raw.code,
            code_verifier: raw.verifier,
            redirect_uri: REDIRECT_URI,
          },
          { 'x-request-id': 'issuer-test-exchange-1' },
        );
        expect(r.status).toBe(200);
        expect(r.body).toEqual({
          access_token: expect.any(String),
          token_type: 'Bearer',
          expires_in: 900,
          scope: SCOPE,
          refresh_token: expect.any(String),
        });
        expect(r.headers.get('cache-control')).toBe('no-store');
        expect(r.headers.get('x-request-id')).toBe('issuer-test-exchange-1');
        expect(decodeJwt(r.body.access_token as string)).toMatchObject({
          sub: seed.personId,
          client_id: seed.publicClientId,
          scope: SCOPE,
        });
      },
    );
  });

  describe('refresh', () => {
    it('rotates the refresh token and re-reads the account epoch', async () => {
      const flow = await authorizationCode();
      const first = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      await knex('accounts').where('id', seed.accountId).update({ epoch: 2 });
      try {
        const second = await client.refreshTokenGrant(flow.config, first.refresh_token!);
        expect(second.refresh_token).toEqual(expect.any(String));
        expect(second.refresh_token).not.toBe(first.refresh_token);
        expect(second.expires_in).toBe(900);
        const claims = decodeJwt(second.access_token);
        expect(claims.actor_epoch).toBe(2);
        expect(claims.sid).toBe(decodeJwt(first.access_token).sid);
      } finally {
        await knex('accounts').where('id', seed.accountId).update({ epoch: 1 });
      }
    });

    it('kills the whole family when a used refresh token is replayed, and marks the session revoked', async () => {
      const flow = await authorizationCode();
      const first = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      const sid = decodeJwt(first.access_token).sid as string;
      const second = await client.refreshTokenGrant(flow.config, first.refresh_token!);

      const replay = await postToken({
        grant_type: 'refresh_token',
        client_id: seed.publicClientId,
        refresh_token: first.refresh_token!,
      });
      expectTokenError(replay, 400, 'invalid_grant');

      const successor = await postToken({
        grant_type: 'refresh_token',
        client_id: seed.publicClientId,
        refresh_token: second.refresh_token!,
      });
      expectTokenError(successor, 400, 'invalid_grant');

      const session = await knex('sessions').where('id', sid).first();
      expect(session.revoked_at).not.toBeNull();
      expect(Number((await knex('oidc_payloads').where('grant_id', sid).count({ n: '*' }).first())!.n)).toBe(0);
    });

    it('lets at most one of two concurrent refreshes with the same token win, and the family dies', async () => {
      const flow = await authorizationCode();
      const first = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      const sid = decodeJwt(first.access_token).sid as string;
      const form = { grant_type: 'refresh_token', client_id: seed.publicClientId, refresh_token: first.refresh_token! };
      const results = await Promise.all([postToken(form), postToken(form)]);
      expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
      for (const r of results.filter((x) => x.status !== 200)) expectTokenError(r, 400, 'invalid_grant');
      for (const r of results.filter((x) => x.status === 200)) {
        const next = await postToken({ ...form, refresh_token: r.body.refresh_token as string });
        expectTokenError(next, 400, 'invalid_grant');
      }
      expect((await knex('sessions').where('id', sid).first()).revoked_at).not.toBeNull();
    });

    it('answers invalid_scope without consuming the refresh token while the tenant grant is withdrawn', async () => {
      const flow = await authorizationCode();
      const first = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      const saved = await knex('tenant_grants').where('client_id', seed.publicClientId).select();
      await knex('tenant_grants').where('client_id', seed.publicClientId).delete();
      try {
        const r = await postToken({
          grant_type: 'refresh_token',
          client_id: seed.publicClientId,
          refresh_token: first.refresh_token!,
        });
        expectTokenError(r, 400, 'invalid_scope');
      } finally {
        await knex('tenant_grants').insert(saved);
      }
      const again = await client.refreshTokenGrant(flow.config, first.refresh_token!);
      expect(again.access_token).toEqual(expect.any(String));
    });

    it('answers a refresh for a scope outside the original one with invalid_scope', async () => {
      const flow = await authorizationCode(seed.publicClientId, 'svc.profile.self.read');
      const first = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      const r = await postToken({
        grant_type: 'refresh_token',
        client_id: seed.publicClientId,
        refresh_token: first.refresh_token!,
        scope: 'svc.tenant.info.read',
      });
      expectTokenError(r, 400, 'invalid_scope');
    });

    it('refuses a disabled client with invalid_client at its next token request', async () => {
      const flow = await authorizationCode(seed.disposableClientId, 'svc.profile.self.read');
      const first = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      await knex('clients').where('id', seed.disposableClientId).update({ status: 'disabled' });
      const r = await postToken({
        grant_type: 'refresh_token',
        client_id: seed.disposableClientId,
        refresh_token: first.refresh_token!,
      });
      expectTokenError(r, 400, 'invalid_client');
    });
  });

  describe('token endpoint strictness', () => {
    let flow: Awaited<ReturnType<typeof authorizationCode>>;
    const exchange = (extra: Record<string, string> = {}) => ({
      grant_type: 'authorization_code',
      client_id: seed.publicClientId,
      code: flow.code,
      code_verifier: flow.verifier,
      redirect_uri: REDIRECT_URI,
      ...extra,
    });

    beforeAll(async () => {
      flow = await authorizationCode();
    });

    it('rejects an unlisted form field with a TokenError', async () => {
      expectTokenError(await postToken(exchange({ scope: 'svc.profile.self.read' })), 400, 'invalid_grant');
      expectTokenError(await postToken(exchange({ resource: 'urn:svc-api' })), 400, 'invalid_grant');
    });

    it('rejects a code_verifier shorter than 43 characters with invalid_grant', async () => {
      expectTokenError(await postToken(exchange({ code_verifier: 'a'.repeat(42) })), 400, 'invalid_grant');
    });

    it('rejects a code_verifier that does not match the challenge with invalid_grant', async () => {
      expectTokenError(
        await postToken(exchange({ code_verifier: client.randomPKCECodeVerifier() })),
        400,
        'invalid_grant',
      );
    });

    it('answers client_credentials with 400 unsupported_grant_type while it is switched off', async () => {
      const r = await postToken(
        { grant_type: 'client_credentials', client_id: seed.confidentialClientId },
        { authorization: basicAuth(seed.confidentialClientId, seed.clientSecret) },
      );
      expectTokenError(r, 400, 'unsupported_grant_type');
    });

    it('answers an unknown or missing grant_type with unsupported_grant_type', async () => {
      expectTokenError(
        await postToken({ grant_type: 'password', client_id: seed.publicClientId, username: 'a', password: 'b' }),
        400,
        'unsupported_grant_type',
      );
      expectTokenError(await postToken({ client_id: seed.publicClientId }), 400, 'unsupported_grant_type');
    });

    it(
      'rejects Basic auth combined with client_secret in ' + 'the body as invalid_client with a Basic challenge',
      async () => {
        const r = await postToken(
          exchange({ client_id: seed.confidentialClientId, client_secret: seed.clientSecret }),
          {
            authorization: basicAuth(seed.confidentialClientId, seed.clientSecret),
          },
        );
        expectTokenError(r, 401, 'invalid_client');
        expect(r.headers.get('www-authenticate')).toMatch(/^Basic /);
      },
    );

    it('answers HTML-preferring callers with JSON too', async () => {
      const r = await postToken(exchange({ code: 'no-such-code' }), { accept: 'text/html' });
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    });
  });

  describe('confidential client', () => {
    it('answers a wrong secret via Basic with 401 invalid_client and a Basic challenge', async () => {
      const flow = await authorizationCode(seed.confidentialClientId, 'svc.profile.self.read', seed.clientSecret);
      const r = await postToken(
        { grant_type: 'authorization_code', code: flow.code, code_verifier: flow.verifier, redirect_uri: REDIRECT_URI },
        { authorization: basicAuth(seed.confidentialClientId, 'not-the-secret') },
      );
      expectTokenError(r, 401, 'invalid_client');
      expect(r.headers.get('www-authenticate')).toMatch(/^Basic /);
    });

    it('answers a wrong client_secret in the body with 400 invalid_client and no challenge', async () => {
      const flow = await authorizationCode(seed.confidentialClientId, 'svc.profile.self.read', seed.clientSecret);
      const r = await postToken({
        grant_type: 'authorization_code',
        client_id: seed.confidentialClientId,
        client_secret: 'not-the-secret',
        code: flow.code,
        code_verifier: flow.verifier,
        redirect_uri: REDIRECT_URI,
      });
      expectTokenError(r, 400, 'invalid_client');
      expect(r.headers.get('www-authenticate')).toBeNull();
    });

    it.each([
      [
        'without a code challenge',
        (u: URL) => (u.searchParams.delete('code_challenge'), u.searchParams.delete('code_challenge_method')),
      ],
      [
        'with the plain method',
        (u: URL) => (
          u.searchParams.set('code_challenge', 'v'.repeat(43)),
          u.searchParams.set('code_challenge_method', 'plain')
        ),
      ],
    ])(
      'must use PKCE S256 like a public client (§5 rule 6): an authorization request %s is refused',
      async (_name, edit) => {
        const { authUrl, state } = await startAuthorization(seed.confidentialClientId);
        edit(authUrl);
        const res = await fetch(authUrl, { redirect: 'manual' });
        const location = new URL(res.headers.get('location') ?? '', url);
        expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
        expect({
          error: location.searchParams.get('error'),
          code: location.searchParams.get('code'),
          state: location.searchParams.get('state'),
        }).toEqual({ error: 'invalid_request', code: null, state });
      },
    );

    it('exchanges the code with the right secret (stored hashed) via Basic', async () => {
      const flow = await authorizationCode(seed.confidentialClientId, 'svc.profile.self.read', seed.clientSecret);
      const tokens = await client.authorizationCodeGrant(flow.config, flow.callback, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
      });
      expect(decodeJwt(tokens.access_token)).toMatchObject({
        client_id: seed.confidentialClientId,
        scope: 'svc.profile.self.read',
        sub: seed.personId,
      });
      expect(tokens.refresh_token).toEqual(expect.any(String));
    });
  });

  describe('authorization and interactions', () => {
    it('sends the person back with error=access_denied when they press Deny', async () => {
      const { authUrl } = await startAuthorization(seed.publicClientId);
      const callback = await signInAndConsent(browser, authUrl, person, 'Deny');
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('code')).toBeNull();
    });

    it('redirects with error=invalid_scope when no requested scope is granted to the client', async () => {
      const back = await authorizeRedirect('svc.person.read');
      expect(back.searchParams.get('error')).toBe('invalid_scope');
      expect(back.searchParams.get('code')).toBeNull();
    });

    it('refuses the openid scope with error=invalid_scope: no ID tokens are issued', async () => {
      const back = await authorizeRedirect(`openid ${SCOPE}`);
      expect(back.searchParams.get('error')).toBe('invalid_scope');
      expect(back.searchParams.get('code')).toBeNull();
    });

    it(
      're-renders the login form with one generic message ' + 'for a wrong password or a person outside the tenant',
      async () => {
        const messages: string[] = [];
        for (const credentials of [
          { username: seed.username, password: 'wrong password' },
          { username: 'nobody-here', password: seed.password },
          { username: seed.outsiderUsername, password: seed.password },
        ]) {
          const { authUrl } = await startAuthorization(seed.publicClientId);
          await inNewPage(async (page) => {
            await page.goto(authUrl.href);
            await page.locator('input[name="username"]').fill(credentials.username);
            await page.locator('input[name="password"]').fill(credentials.password);
            const [res] = await Promise.all([
              page.waitForResponse(
                (r) =>
                  r.request().method() === 'POST' && /^\/interaction\/[^/]+\/login$/.test(new URL(r.url()).pathname),
              ),
              page.getByRole('button', { name: 'Sign in', exact: true }).click(),
            ]);
            await page.waitForURL((u) => /^\/interaction\/[^/]+\/login$/.test(u.pathname));
            expect(res.status()).toBe(401);
            expect(res.headers()['content-security-policy']).toContain("default-src 'none'");
            expect(await page.locator('form input[name="username"]').count()).toBe(1);
            expect(await page.locator('form input[name="password"][type="password"]').count()).toBe(1);
            const alerts = page.getByRole('alert');
            expect(await alerts.count()).toBe(1);
            messages.push(await alerts.innerText());
          });
        }
        expect(messages).toHaveLength(3);
        expect(messages[0]).toContain(LOGIN_FAILED);
        expect(new Set(messages).size).toBe(1);
      },
    );

    it(
      'asks a browser still signed in as a person who may no longer use the client to sign in again, ' +
        'and answers prompt=none with login_required',
      async () => {
        const bob = { personId: newId('psn'), username: `bob-${randomBytes(3).toString('hex')}` };
        await knex('persons').insert({ id: bob.personId, display_name: 'Bob' });
        await knex('tenant_person_relationships').insert({ tenant_id: seed.tenantId, person_id: bob.personId });
        await knex('accounts').insert({
          id: newId('acc'),
          tenant_id: seed.tenantId,
          kind: 'person',
          person_id: bob.personId,
          username: bob.username,
          password_hash: await hashSecret(seed.password),
        });
        await inNewPage(async (page) => {
          const first = await startAuthorization(seed.publicClientId);
          await page.goto(first.authUrl.href);
          await page.locator('input[name="username"]').fill(bob.username);
          await page.locator('input[name="password"]').fill(seed.password);
          await page.getByRole('button', { name: 'Sign in', exact: true }).click();
          const sentBack = page.waitForRequest((r) => r.url().startsWith(REDIRECT_URI));
          await page.getByRole('button', { name: 'Allow', exact: true }).click();
          expect(new URL((await sentBack).url()).searchParams.get('code')).toBeTruthy();

          // The relationship ends while the browser's sign-in is remembered (an hour); the next authorizations come from
          // another tab of the same browser (the first shows the app's callback page).
          await knex('tenant_person_relationships').where({ tenant_id: seed.tenantId, person_id: bob.personId }).del();
          const tab = await page.context().newPage();
          const again = await startAuthorization(seed.publicClientId);
          const res = await tab.goto(again.authUrl.href);
          expect(res?.status()).toBe(200);
          expect(await tab.locator('form input[name="username"]').count()).toBe(1);

          const silent = (await startAuthorization(seed.publicClientId)).authUrl;
          silent.searchParams.set('prompt', 'none');
          const other = await page.context().newPage();
          const back = other.waitForRequest((r) => r.url().startsWith(REDIRECT_URI));
          await other.goto(silent.href).catch(() => undefined);
          expect(new URL((await back).url()).searchParams.get('error')).toBe('login_required');
        });
      },
    );

    it('renders a login page with username, password and a single submit button', async () => {
      const { authUrl } = await startAuthorization(seed.publicClientId);
      await inNewPage(async (page) => {
        const res = await page.goto(authUrl.href);
        expect(res?.status()).toBe(200);
        expect(await page.title()).toMatch(/\S/);
        const username = page.getByLabel('Username', { exact: true });
        expect(await username.getAttribute('name')).toBe('username');
        const password = page.getByLabel('Password', { exact: true });
        expect({
          id: await password.getAttribute('id'),
          name: await password.getAttribute('name'),
          type: await password.getAttribute('type'),
        }).toEqual({
          id: 'password',
          name: 'password',
          type: 'password',
        });
        expect(await page.getByRole('button').count()).toBe(1);
        expect(await page.locator('[type="submit"], button:not([type])').count()).toBe(1);
      });
    });
  });

  describe('a browser step that fails', () => {
    it('keeps what the page showed: its URL, the last document status, the HTML and a screenshot', async () => {
      const stale = `${url}/interaction/no-such-interaction`;
      const error = await inNewPage((page) =>
        keepingPageOnFailure(page, 'kept-page', async () => {
          await page.goto(stale);
          await page.locator('input[name="username"]').fill('bob', { timeout: 300 });
        }),
      ).then(
        () => undefined,
        (e: Error) => e,
      );
      const kept = /page kept: (\S+)\.\{txt,html,png\}; (\d{3}) /.exec(error?.message ?? '');
      expect(kept?.[2]).toBe('400');
      expect(readFileSync(`${kept![1]}.txt`, 'utf8')).toContain(`url: ${stale}\nlast document response: 400 ${stale}`);
      expect(readFileSync(`${kept![1]}.html`, 'utf8')).toContain(
        'This sign-in request has expired or is no longer valid.',
      );
      expect(statSync(`${kept![1]}.png`).size).toBeGreaterThan(0);
    });
  });

  describe('configuration variants', () => {
    /** Another issuer on the same database with different settings, answering on its own port. */
    async function issuerWith(env: Record<string, string>) {
      const http = await listen(0);
      const config = loadConfig({ ...process.env, AUTH_URL: http.url, LOG_LEVEL: 'silent', ...env });
      const { app } = await createIssuerApp({
        knex,
        config,
        log: createLogger('issuer', 'silent'),
        telemetry: createTelemetry(),
      });
      http.server.on('request', app);
      return http;
    }
    const jwksOf = async (base: string) =>
      ((await getDocumented('getJwks', `${base}/.well-known/jwks.json`)) as { keys: Record<string, unknown>[] }).keys;

    it('keeps the generated signing key in issuer_keys and reuses it on the next start', async () => {
      const rows = await knex('issuer_keys').select('kid');
      expect(rows).toHaveLength(1);
      const other = await issuerWith({});
      try {
        expect((await jwksOf(other.url)).map((k) => k.kid)).toEqual([rows[0].kid]);
        expect(Number((await knex('issuer_keys').count({ n: '*' }).first())!.n)).toBe(1);
      } finally {
        await other.close();
      }
    });

    it(
      'publishes every ISSUER_JWKS key (public halves only) ' + 'and advertises client_credentials when enabled',
      async () => {
        const { generateKeyPair, exportJWK } = await import('jose');
        const keys = await Promise.all(
          ['k-sign', 'k-old'].map(async (kid) => ({
            ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)),
            kid,
          })),
        );
        const other = await issuerWith({
          ISSUER_JWKS: JSON.stringify({ keys }),
          ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
        });
        try {
          const published = await jwksOf(other.url);
          expect(published.map((k) => k.kid)).toEqual(['k-sign', 'k-old']);
          for (const k of published) expect(k).not.toHaveProperty('d');
          const doc = (await getDocumented('getDiscovery', `${other.url}/.well-known/openid-configuration`)) as {
            grant_types_supported: string[];
          };
          expect(doc.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'client_credentials']);
          // A public client may not use it: "grant type not allowed for this client" is unsupported_grant_type.
          const res = await postToken(
            { grant_type: 'client_credentials', client_id: seed.publicClientId, scope: 'svc.profile.self.read' },
            {},
            other.url,
          );
          expect({ status: res.status, body: res.body }).toEqual({
            status: 400,
            body: { error: 'unsupported_grant_type', error_description: expect.any(String) },
          });
          // The confidential client, now listing client_credentials, still loads and authenticates.
          const bad = await postToken(
            { grant_type: 'refresh_token', refresh_token: 'no-such-token' },
            { authorization: basicAuth(seed.confidentialClientId, seed.clientSecret) },
            other.url,
          );
          expect({ status: bad.status, error: bad.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
        } finally {
          await other.close();
        }
      },
    );
  });

  describe('token errors', () => {
    it('every token error body has an error from the 4-value enum and only error/error_description', () => {
      expect(errorBodies.length).toBeGreaterThan(10);
      for (const body of errorBodies) {
        expect(TOKEN_ERRORS).toContain((body as { error: string }).error);
        expect(Object.keys(body as object).every((k) => k === 'error' || k === 'error_description')).toBe(true);
      }
    });
  });
});
