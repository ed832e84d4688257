// The plan ceiling and its one exception (contract §1 rule 3, §6 rule 7, §7; §3 last row and §8 rule 2; issue 30):
// every issuance (authorization code, refresh, client_credentials) stays within the tenant's plan, except that an app
// whose extensions hold records in the tenant keeps the two metadata capabilities it is granted, to read, list, delete
// and export what it stored. No stored record: requested ∩ grant ∩ plan ceiling, invalid_scope when that is empty.
// At the gateway, a token that carries the metadata scopes keeps them below the plan (reads, deletes; writes 422
// quota_exceeded), also once the last record is gone ("any" state of §3's last row); a token without them, and
// svc.person.read, get plan_capability_excluded. Tokens are asked for with openid-client, signed in and consented in
// Chromium; API calls go through the gateway and are held to the OpenAPI documents.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { CAPABILITIES } from '../../wire/decision.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupMachineClient, type AdminClient } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { authorizationRequest, discover, signInAndConsent } from '../support/oauth.js';
import { personApi, registerExtension, type PersonApi } from '../support/extensions.js';
import { expectProblem } from '../support/problems.js';

describe('plan-ceiling', () => {
  const ALL = CAPABILITIES.join(' ');
  const METADATA = 'svc.person.metadata.read svc.person.metadata.write';
  const L1_SCOPES = ['svc.profile.self.read', 'svc.tenant.info.read'];
  const WITH_RECORDS_SCOPES = [...L1_SCOPES, 'svc.person.metadata.read', 'svc.person.metadata.write'].sort();

  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  let api: PersonApi;

  beforeAll(async () => {
    [system, browser] = await Promise.all([
      startTestSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' }),
      launchBrowser(),
    ]);
    admin = adminClient(system);
    api = personApi(system.baseUrl);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const sorted = (scope: string | undefined) => (scope ?? '').split(' ').filter(Boolean).sort();

  /** The token error openid-client surfaced, as {status, error}. */
  async function grantError(attempt: Promise<unknown>): Promise<{ status?: number; error?: string }> {
    try {
      await attempt;
    } catch (err) {
      const e = err as { status?: number; error?: string };
      return { status: e.status, error: e.error };
    }
    throw new Error('the grant succeeded');
  }

  /**
   * An app of a tenant on `plan` that uses every grant: a confidential client granted every capability, whose service
   * account holds every capability too, and one extension it owns.
   */
  async function appOnPlan(plan: 'L1' | 'L2') {
    const app = await setupMachineClient(admin, { plan, grant: [...CAPABILITIES] });
    const config = await discover({ authUrl: system.authUrl, ...app });
    const extension = await registerExtension(admin, app.clientId);
    return { app, config, extension };
  }
  type App = Awaited<ReturnType<typeof appOnPlan>>;

  /** The person signs in and consents to `scope`; returns the callback's code, not yet exchanged. */
  async function consented({ app, config }: App, scope: string) {
    const request = await authorizationRequest(config, app.redirectUri, scope);
    const callback = await signInAndConsent(browser, request.url, app);
    return { callback, request };
  }
  const exchange = ({ config }: App, { callback, request }: Awaited<ReturnType<typeof consented>>) =>
    oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state });
  const authorizationCode = async (app: App, scope: string) => exchange(app, await consented(app, scope));

  /** Where the authorization endpoint sends the browser back without any sign-in (an error for the app). */
  async function authorizeRedirect({ app, config }: App, scope: string): Promise<URL> {
    const request = await authorizationRequest(config, app.redirectUri, scope);
    const res = await fetch(request.url, { redirect: 'manual' });
    return new URL(res.headers.get('location') ?? '', system.authUrl);
  }

  const clientCredentials = ({ config }: App, scope: string) => oidc.clientCredentialsGrant(config, { scope });

  describe('a tenant that was never above L1 (its apps can have stored nothing)', () => {
    let l1: App;
    beforeAll(async () => {
      l1 = await appOnPlan('L1');
    });

    it('authorization_code: every capability requested and granted, the token carries the L1 ones only', async () => {
      const tokens = await authorizationCode(l1, ALL);
      expect(sorted(tokens.scope)).toEqual(L1_SCOPES);
      // refresh_token: the same ceiling.
      expect(sorted((await oidc.refreshTokenGrant(l1.config, tokens.refresh_token!)).scope)).toEqual(L1_SCOPES);
      // The gateway denies the metadata calls for the plan, not for the token's scope.
      expectProblem(await api.list(tokens.access_token, l1.app.personId), 403, 'plan_capability_excluded');
    });

    it('authorization_code asking only for capabilities above the plan: error=invalid_scope, no code', async () => {
      const back = await authorizeRedirect(l1, METADATA);
      expect(back.searchParams.get('error')).toBe('invalid_scope');
      expect(back.searchParams.get('code')).toBeNull();
    });

    it('client_credentials: L1 capabilities only, and 400 invalid_scope for the metadata ones alone', async () => {
      const tokens = await clientCredentials(l1, ALL);
      expect(sorted(tokens.scope)).toEqual(L1_SCOPES);
      expect(await grantError(clientCredentials(l1, METADATA))).toEqual({ status: 400, error: 'invalid_scope' });
      expectProblem(await api.get(tokens.access_token, l1.app.personId, l1.extension), 403, 'plan_capability_excluded');
    });
  });

  describe('a tenant downgraded to L1 while its app holds records, until the app deletes the last one', () => {
    let down: App;
    let person: { token: string; refresh: string };
    let metadataOnly: { refresh: string };
    let workload: string;
    let pendingCode: Awaited<ReturnType<typeof consented>>;

    beforeAll(async () => {
      down = await appOnPlan('L2');
      const tokens = await authorizationCode(down, ALL);
      const put = await api.put(
        tokens.access_token,
        down.app.personId,
        down.extension,
        { schemaVersion: 1, data: { note: 'stored on L2' } },
        { 'if-none-match': '*' },
      );
      expect(put.status).toBe(201);
      metadataOnly = { refresh: (await authorizationCode(down, METADATA)).refresh_token! };
      await admin.ok('PATCH', `/tenants/${down.app.tenantId}`, { plan: 'L1' });
    });

    it('with a record stored: every grant issues L1 ∪ the two metadata capabilities, never svc.person.read', async () => {
      const tokens = await authorizationCode(down, ALL);
      expect(sorted(tokens.scope)).toEqual(WITH_RECORDS_SCOPES);
      const refreshed = await oidc.refreshTokenGrant(down.config, tokens.refresh_token!);
      expect(sorted(refreshed.scope)).toEqual(WITH_RECORDS_SCOPES);
      person = { token: refreshed.access_token, refresh: refreshed.refresh_token! };
      const onlyMetadata = await oidc.refreshTokenGrant(down.config, metadataOnly.refresh);
      expect(sorted(onlyMetadata.scope)).toEqual(sorted(METADATA));
      metadataOnly = { refresh: onlyMetadata.refresh_token! };
      const machine = await clientCredentials(down, ALL);
      expect(sorted(machine.scope)).toEqual(WITH_RECORDS_SCOPES);
      workload = machine.access_token;
      // A code consented now, exchanged after the last record is gone.
      pendingCode = await consented(down, METADATA);
    });

    it('with a record stored: the gateway reads and lists it; writes are 422 quota_exceeded', async () => {
      const { personId } = down.app;
      const held = await api.get(person.token, personId, down.extension);
      expect(held.status).toBe(200);
      expect((await api.get(workload, personId, down.extension)).status).toBe(200);
      expect((await api.list(person.token, personId)).status).toBe(200);
      const update = { schemaVersion: 1, data: { note: 'changed' } };
      expectProblem(
        await api.put(person.token, personId, down.extension, update, { 'if-match': held.body.etag }),
        422,
        'quota_exceeded',
      );
      expectProblem(await api.getPerson(person.token, personId), 403, 'plan_capability_excluded');
    });

    it('the last record deleted: tokens carrying the metadata scopes still read and delete, and writes stay 422', async () => {
      const { personId } = down.app;
      const create = { schemaVersion: 1, data: { note: 'new' } };
      expect((await api.delete(person.token, personId, down.extension, { 'if-match': '*' })).status).toBe(204);
      expectProblem(await api.get(person.token, personId, down.extension), 404, 'not_found');
      const listed = await api.list(workload, personId);
      expect({ status: listed.status, items: listed.body.items }).toEqual({ status: 200, items: [] });
      // DELETE of the absent record is idempotent (§3), and a write is 422 quota_exceeded with nothing stored.
      expect((await api.delete(person.token, personId, down.extension, { 'if-match': '*' })).status).toBe(204);
      expectProblem(
        await api.put(person.token, personId, down.extension, create, { 'if-none-match': '*' }),
        422,
        'quota_exceeded',
      );
      expectProblem(await api.get(workload, personId, down.extension), 404, 'not_found');
      expectProblem(await api.getPerson(person.token, personId), 403, 'plan_capability_excluded');
    });

    it('after the last record: every grant is back to requested ∩ grant ∩ plan, invalid_scope when empty', async () => {
      // authorization_code: a code consented while records existed is refused at the token endpoint...
      expect(await grantError(exchange(down, pendingCode))).toEqual({ status: 400, error: 'invalid_scope' });
      // ...a new authorization gets L1 only, or no code at all for the metadata alone.
      expect(sorted((await authorizationCode(down, ALL)).scope)).toEqual(L1_SCOPES);
      expect((await authorizeRedirect(down, METADATA)).searchParams.get('error')).toBe('invalid_scope');
      // refresh_token
      expect(sorted((await oidc.refreshTokenGrant(down.config, person.refresh)).scope)).toEqual(L1_SCOPES);
      expect(await grantError(oidc.refreshTokenGrant(down.config, metadataOnly.refresh))).toEqual({
        status: 400,
        error: 'invalid_scope',
      });
      // client_credentials
      expect(sorted((await clientCredentials(down, ALL)).scope)).toEqual(L1_SCOPES);
      expect(await grantError(clientCredentials(down, METADATA))).toEqual({ status: 400, error: 'invalid_scope' });
    });
  });
});
