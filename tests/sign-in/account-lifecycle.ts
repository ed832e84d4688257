// The admin levers on a person's access (contract §1 rule 5, §3, §5.10), each shown on the very next API request and
// the very next token request, with real consented tokens: disabling the login account, advancing its epoch, revoking
// its sessions, and closing a capability. Plus the decision log and usage an admin reads afterwards.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { decodeJwt } from 'jose';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupMachineClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { clientCredentialsToken, obtainTokens, postTokenForm, type Tokens } from '../support/oauth.js';
import { PERSON_SCOPES, personApi, registerExtension } from '../support/extensions.js';
import { listExtensions } from '../../policies/admin/extensions.js';
import { callApi } from '../support/api.js';

describe('account-lifecycle', () => {
  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  beforeAll(async () => {
    [system, browser] = await Promise.all([
      startTestSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' }),
      launchBrowser(),
    ]);
    admin = adminClient(system);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const SCOPE = 'svc.profile.self.read svc.tenant.info.read';
  const signIn = (tenant: TenantSetup): Promise<Tokens> =>
    obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, SCOPE);
  const me = (token: string) => callApi(system.baseUrl, 'getMe', '/me', token);
  const tenantInfo = (token: string) => callApi(system.baseUrl, 'getTenant', '/tenant', token);

  /** A refresh with the public client; the answer is held to token-api.yaml. */
  async function refresh(tenant: TenantSetup, refreshToken: string) {
    const { status, body } = await postTokenForm(system.authUrl, {
      grant_type: 'refresh_token',
      client_id: tenant.clientId,
      refresh_token: refreshToken,
    });
    return { status, body: body as Record<string, string> };
  }

  // A 204 has no body: its denial reads { status: 204 }, so a missing refusal fails by its status.
  const denial = async (res: Promise<{ status: number; body?: { error?: string } }>) => {
    const r = await res;
    return { status: r.status, error: r.body?.error };
  };

  describe('disabling a person login account', () => {
    it(
      'denies the in-flight token 403 subject_revoked and refuses its refresh token; ' + 'enabling restores both',
      async () => {
        const tenant = await setupTenant(admin);
        const tokens = await signIn(tenant);
        expect((await me(tokens.access_token)).status).toBe(200);

        const off = await admin.checked('updateAccount', 'PATCH', `/accounts/${tenant.accountId}`, {
          status: 'disabled',
        });
        expect(off.body).toEqual({
          accountId: tenant.accountId,
          kind: 'person',
          status: 'disabled',
          epoch: 1,
          tenantId: tenant.tenantId,
          personId: tenant.personId,
        });
        expect(await denial(me(tokens.access_token))).toEqual({ status: 403, error: 'subject_revoked' });
        expect(await denial(refresh(tenant, tokens.refresh_token!))).toEqual({ status: 400, error: 'invalid_grant' });

        await admin.ok('PATCH', `/accounts/${tenant.accountId}`, { status: 'active' });
        expect((await me(tokens.access_token)).status).toBe(200);
      },
    );
  });

  describe('advancing the epoch', () => {
    it(
      'denies tokens of the old epoch 403 epoch_changed; ' + 'a refreshed token carries the new epoch and works',
      async () => {
        const tenant = await setupTenant(admin);
        const tokens = await signIn(tenant);
        const res = await admin.checked('advanceAccountEpoch', 'POST', `/accounts/${tenant.accountId}/epoch`);
        expect(res.body).toEqual({ accountId: tenant.accountId, epoch: 2 });
        expect(await denial(me(tokens.access_token))).toEqual({ status: 403, error: 'epoch_changed' });

        const refreshed = await refresh(tenant, tokens.refresh_token!);
        expect(refreshed.status).toBe(200);
        expect(decodeJwt(refreshed.body.access_token!).actor_epoch).toBe(2);
        expect((await me(refreshed.body.access_token!)).status).toBe(200);
      },
    );
  });

  describe('revoking every session of an account', () => {
    it(
      'ends every session and refresh-token family: ' + '403 subject_revoked, invalid_grant; a new sign-in works',
      async () => {
        const tenant = await setupTenant(admin);
        const [first, second] = [await signIn(tenant), await signIn(tenant)];
        const browserLogins = () =>
          system.db
            .knex('oidc_payloads')
            .where('model', 'Session')
            .whereRaw(`payload->>'accountId' = ?`, [tenant.personId]);
        expect((await browserLogins()).length).toBeGreaterThan(0);
        const res = await admin.checked(
          'revokeAccountSessions',
          'POST',
          `/accounts/${tenant.accountId}/sessions/revoke`,
        );
        expect(res.status).toBe(204);
        expect(await browserLogins()).toEqual([]);
        for (const tokens of [first, second]) {
          expect(await denial(me(tokens.access_token))).toEqual({ status: 403, error: 'subject_revoked' });
          expect(await denial(refresh(tenant, tokens.refresh_token!))).toEqual({ status: 400, error: 'invalid_grant' });
        }
        const again = await signIn(tenant);
        expect((await me(again.access_token)).status).toBe(200);
        expect((await refresh(tenant, again.refresh_token!)).status).toBe(200);
      },
    );

    it('answers 404 for an unknown or malformed account id', async () => {
      for (const id of ['acc_00000000000000000000000000', 'not-an-account', 'acc_%00', '%E0%A4%A']) {
        expect((await admin.checked('revokeAccountSessions', 'POST', `/accounts/${id}/sessions/revoke`)).status).toBe(
          404,
        );
        expect((await admin.checked('advanceAccountEpoch', 'POST', `/accounts/${id}/epoch`)).status).toBe(404);
        expect((await admin.checked('updateAccount', 'PATCH', `/accounts/${id}`, { status: 'disabled' })).status).toBe(
          404,
        );
      }
    });
  });

  describe('deleting an app', () => {
    /** A new app under a deleted app's slug (it gets the same client id), granted `capabilities`. */
    async function appUnderSameSlug(deleted: TenantSetup, type: 'public' | 'confidential', capabilities: string[]) {
      const again = await admin.ok('POST', `/tenants/${deleted.tenantId}/clients`, {
        slug: deleted.clientId.split('_').at(-1),
        name: 'Second app',
        kind: 'third_party',
        type,
        redirectUris: [deleted.redirectUri],
      });
      expect(again.clientId).toBe(deleted.clientId);
      await admin.ok('PUT', `/tenants/${deleted.tenantId}/grants/${again.clientId}`, { capabilities });
      return again;
    }

    it(
      'ends its access from the next request (403 client_unknown, ' +
        'invalid_client), removes what was only its, frees the slug',
      async () => {
        const tenant = await setupMachineClient(admin, { grant: SCOPE.split(' ') });
        const personTenant = await setupTenant(admin);
        const [tokens, workload] = await Promise.all([
          signIn(personTenant),
          clientCredentialsToken(system.authUrl, tenant, SCOPE),
        ]);
        const emptyExtension = await registerExtension(admin, tenant.clientId);
        expect((await me(workload)).status).toBe(200);
        expect((await me(tokens.access_token)).status).toBe(200);

        for (const app of [tenant, personTenant])
          expect((await admin.checked('deleteClient', 'DELETE', `/clients/${app.clientId}`)).status).toBe(204);
        expect(await denial(me(workload))).toEqual({ status: 403, error: 'client_unknown' });
        expect(await denial(me(tokens.access_token))).toEqual({ status: 403, error: 'client_unknown' });
        expect(await denial(refresh(personTenant, tokens.refresh_token!))).toEqual({
          status: 400,
          error: 'invalid_client',
        });
        expect((await admin.ok('GET', `/tenants/${tenant.tenantId}/clients`)).items).toEqual([]);
        expect((await admin.call('GET', `/tenants/${tenant.tenantId}/grants/${tenant.clientId}`)).status).toBe(404);
        expect((await admin.ok('GET', `/tenants/${tenant.tenantId}/service-accounts`)).items).toEqual([]);
        expect(await listExtensions(system.db.knex, tenant.tenantId)).not.toContainEqual(
          expect.objectContaining({ extensionId: emptyExtension }),
        );
        expect((await admin.call('DELETE', `/clients/${tenant.clientId}`)).status).toBe(404);
        const familyRows = await system.db
          .knex('oidc_payloads')
          .whereRaw(`payload->>'clientId' = ?`, [personTenant.clientId])
          .count({ n: '*' });
        expect(Number(familyRows[0]!.n)).toBe(0); // the consent, its codes and refresh tokens

        // A new app under the same slug gets the same client id; the old app's tokens still do not work for it.
        await appUnderSameSlug(personTenant, 'public', SCOPE.split(' '));
        expect(await denial(me(tokens.access_token))).toEqual({ status: 403, error: 'subject_revoked' });
        expect(await denial(refresh(personTenant, tokens.refresh_token!))).toEqual({
          status: 400,
          error: 'invalid_grant',
        });
      },
    );

    it('answers 404 for an extension that ended with its app, also to a new app under the same client id', async () => {
      const scopes = PERSON_SCOPES.split(' ');
      const first = await setupMachineClient(admin, { grant: scopes });
      const extension = await registerExtension(admin, first.clientId);
      const api = personApi(system.baseUrl);
      const absentRecord = (token: string) => api.delete(token, first.personId, extension, { 'if-match': '*' });
      // The backend learns the extension's owner here: the record is absent, its extension registered (204).
      expect((await absentRecord(await clientCredentialsToken(system.authUrl, first, PERSON_SCOPES))).status).toBe(204);
      expect((await admin.checked('deleteClient', 'DELETE', `/clients/${first.clientId}`)).status).toBe(204);

      const again = await appUnderSameSlug(first, 'confidential', scopes);
      await admin.ok('POST', `/tenants/${first.tenantId}/service-accounts`, {
        clientId: again.clientId,
        name: 'second sync',
        capabilities: scopes,
      });
      const token = await clientCredentialsToken(
        system.authUrl,
        { clientId: again.clientId, clientSecret: again.clientSecret },
        PERSON_SCOPES,
      );
      const notFound = { status: 404, error: 'not_found' };
      expect(await denial(absentRecord(token))).toEqual(notFound);
      for (const schemaVersion of [1, 2])
        expect(
          await denial(
            api.put(token, first.personId, extension, { schemaVersion, data: {} }, { 'if-none-match': '*' }),
          ),
        ).toEqual(notFound);
    });

    it('answers writes racing the deletion of the app they name with 404 or success, never a 5xx', async () => {
      const tenant = await setupTenant(admin);
      for (let round = 0; round < 10; round++) {
        const { clientId } = await admin.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
          slug: `racing-${round}`,
          name: 'Racing',
          kind: 'third_party',
          type: 'confidential',
          redirectUris: ['https://racing.example/cb'],
        });
        const answers = await Promise.all([
          admin.call('PUT', `/tenants/${tenant.tenantId}/grants/${clientId}`, { capabilities: SCOPE.split(' ') }),
          admin.call('POST', `/tenants/${tenant.tenantId}/service-accounts`, { clientId, name: 'r', capabilities: [] }),
          admin.call('POST', `/clients/${clientId}/extensions`, { name: 'r', schemas: { 1: { type: 'object' } } }),
          admin.call('DELETE', `/clients/${clientId}`),
        ]);
        const [grant, account, extension, deleted] = answers.map((a) => a.status);
        expect({ grant, account, extension, deleted }).toEqual({
          grant: [200, 404].includes(grant!) ? grant : 'not 200 or 404',
          account: [201, 404].includes(account!) ? account : 'not 201 or 404',
          extension: [201, 404].includes(extension!) ? extension : 'not 201 or 404',
          deleted: 204,
        });
        expect(await listExtensions(system.db.knex, tenant.tenantId)).toEqual([]);
      }
    });

    it(
      'refuses an app whose extensions hold records (409 already_exists) ' +
        "and changes nothing; another tenant's key gets 403",
      async () => {
        const tenant = await setupTenant(admin, {
          plan: 'L2',
          capabilities: [...SCOPE.split(' '), ...PERSON_SCOPES.split(' ')],
        });
        const extensionId = await registerExtension(admin, tenant.clientId);
        const tokens = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, PERSON_SCOPES);
        const put = await personApi(system.baseUrl).put(
          tokens.access_token,
          tenant.personId,
          extensionId,
          {
            schemaVersion: 1,
            data: { note: 'kept' },
          },
          { 'if-none-match': '*' },
        );
        expect(put.status).toBe(201);

        const refused = await admin.checked('deleteClient', 'DELETE', `/clients/${tenant.clientId}`);
        expect(refused.status).toBe(409);
        expect(refused.body).toMatchObject({
          error: 'already_exists',
          message: expect.stringMatching(/owns 1 stored records/),
        });
        expect((await personApi(system.baseUrl).get(tokens.access_token, tenant.personId, extensionId)).status).toBe(
          200,
        );
        expect(
          (await admin.ok('GET', `/tenants/${tenant.tenantId}/grants/${tenant.clientId}`)).capabilities,
        ).toHaveLength(5);

        const other = await setupTenant(admin);
        const { key } = await admin.ok('POST', `/tenants/${other.tenantId}/admin-keys`);
        const otherKey = adminClient(system, key);
        expect((await otherKey.call('DELETE', `/clients/${tenant.clientId}`)).status).toBe(403);
      },
    );
  });

  describe('closing a capability on the deployment', () => {
    it('answers 403 capability_unavailable and drops it from refreshed tokens; reopening restores access', async () => {
      const tenant = await setupTenant(admin);
      const tokens = await signIn(tenant);
      const closed = await admin.checked('updateCapability', 'PATCH', '/capabilities/svc.tenant.info.read', {
        enabled: false,
      });
      try {
        expect(closed.body).toEqual({ capability: 'svc.tenant.info.read', enabled: false });
        expect(await denial(tenantInfo(tokens.access_token))).toEqual({ status: 403, error: 'capability_unavailable' });
        expect((await me(tokens.access_token)).status).toBe(200);
        const refreshed = await refresh(tenant, tokens.refresh_token!);
        expect(refreshed.body.scope).toBe('svc.profile.self.read');
      } finally {
        await admin.checked('updateCapability', 'PATCH', '/capabilities/svc.tenant.info.read', { enabled: true });
      }
      expect((await tenantInfo(tokens.access_token)).status).toBe(200);
    });

    it('refuses an unknown capability (404) and a non-boolean switch (422)', async () => {
      expect(
        (await admin.checked('updateCapability', 'PATCH', '/capabilities/svc.admin', { enabled: false })).status,
      ).toBe(404);
      expect(
        (await admin.checked('updateCapability', 'PATCH', '/capabilities/svc.person.read', { enabled: 'no' })).status,
      ).toBe(422);
    });
  });

  describe('bad input', () => {
    it('answers bad input to the new admin endpoints with 4xx, never a 5xx', async () => {
      const tenant = await setupTenant(admin);
      const path = `/tenants/${tenant.tenantId}/service-accounts`;
      for (const body of [
        { clientId: 'tp_x\u0000', name: 'a', capabilities: [] },
        { clientId: tenant.clientId, name: 'a', capabilities: ['svc.admin'] },
        { clientId: tenant.clientId, name: 'a' },
      ]) {
        const res = await admin.checked('createServiceAccount', 'POST', path, body);
        expect([404, 422]).toContain(res.status);
      }
      expect(
        (await admin.checked('updateCapability', 'PATCH', '/capabilities/svc.x%00', { enabled: true })).status,
      ).toBeLessThan(500);
      expect(
        (await admin.checked('listDecisions', 'GET', `/tenants/${tenant.tenantId}/decisions?limit=1&limit=2`)).status,
      ).toBe(422);
      expect(
        (await admin.checked('revokeTenantAdminKey', 'DELETE', `/tenants/${tenant.tenantId}/admin-keys/key_%00`))
          .status,
      ).toBe(404);
    });
  });

  describe('decisions and usage', () => {
    it("lists the tenant's recent decisions newest first, with the deny code and the check that decided", async () => {
      const tenant = await setupTenant(admin);
      const tokens = await signIn(tenant);
      const allowed = await me(tokens.access_token);
      await admin.ok('PATCH', `/accounts/${tenant.accountId}`, { status: 'disabled' });
      const denied = await me(tokens.access_token);
      let items: Record<string, unknown>[] = [];
      // The decision log is written in batches off the request path; poll until both rows are stored.
      for (let i = 0; i < 50 && items.length < 2; i++) {
        items = (await admin.checked('listDecisions', 'GET', `/tenants/${tenant.tenantId}/decisions?limit=2`)).body
          .items;
        if (items.length < 2) await new Promise((r) => setTimeout(r, 100));
      }
      expect(items).toMatchObject([
        {
          requestId: denied.headers.get('x-request-id'),
          allow: false,
          code: 'subject_revoked',
          checkName: 'subject.status',
          clientId: tenant.clientId,
          subject: tenant.personId,
        },
        {
          requestId: allowed.headers.get('x-request-id'),
          allow: true,
          code: null,
          checkName: 'allow',
          capability: 'svc.profile.self.read',
        },
      ]);
      expect(
        (await admin.checked('listDecisions', 'GET', `/tenants/${tenant.tenantId}/decisions?limit=0`)).status,
      ).toBe(422);
      expect(
        (await admin.checked('listDecisions', 'GET', '/tenants/ten_00000000000000000000000000/decisions')).status,
      ).toBe(404);

      // Searched by request id: only that request's decision, or none for an id this tenant never sent.
      const byId = await admin.checked(
        'listDecisions',
        'GET',
        `/tenants/${tenant.tenantId}/decisions?requestId=${encodeURIComponent(allowed.headers.get('x-request-id')!)}`,
      );
      expect(byId.body.items).toMatchObject([{ requestId: allowed.headers.get('x-request-id'), allow: true }]);
      expect(byId.body.items).toHaveLength(1);
      expect(
        (
          await admin.checked(
            'listDecisions',
            'GET',
            `/tenants/${tenant.tenantId}/decisions?requestId=not-sent-by-anyone`,
          )
        ).body.items,
      ).toEqual([]);
      for (const bad of ['requestId=', `requestId=${'x'.repeat(129)}`, 'requestId=a&requestId=b'])
        expect(
          (await admin.checked('listDecisions', 'GET', `/tenants/${tenant.tenantId}/decisions?${bad}`)).status,
        ).toBe(422);

      // Filtered and paged: the denial alone, then the allow alone on the page after a page of one.
      const list = async (query: string) =>
        (await admin.checked('listDecisions', 'GET', `/tenants/${tenant.tenantId}/decisions?${query}`)).body;
      expect(
        (
          await list(`outcome=deny&code=subject_revoked&clientId=${tenant.clientId}&capability=svc.profile.self.read`)
        ).items.map((d: { requestId: string }) => d.requestId),
      ).toEqual([denied.headers.get('x-request-id')]);
      expect((await list('code=tenant_suspended')).items).toEqual([]);
      const firstPage = await list('limit=1');
      expect(firstPage.items.map((d: { allow: boolean }) => d.allow)).toEqual([false]);
      const secondPage = await list(`limit=1&cursor=${firstPage.nextCursor}`);
      expect(secondPage).toMatchObject({
        items: [{ requestId: allowed.headers.get('x-request-id') }],
        nextCursor: null,
      });
      for (const bad of [
        'outcome=maybe',
        'code=no_such_code',
        'capability=svc.admin',
        'cursor=not-a-cursor',
        `cursor=${Buffer.from('decision:x1').toString('base64url')}`,
        `cursor=${Buffer.from('person:1').toString('base64url')}`,
      ])
        expect([
          bad,
          (await admin.checked('listDecisions', 'GET', `/tenants/${tenant.tenantId}/decisions?${bad}`)).status,
        ]).toEqual([bad, 422]);
    });

    it(
      "reports the tenant's metered calls, counting each request " +
        'id once (a retry with the same x-request-id is one call)',
      async () => {
        const tenant = await setupTenant(admin);
        const tokens = await signIn(tenant);
        const ids = ['usage-call-0001', 'usage-call-0001', 'usage-call-0002'];
        for (const id of ids)
          expect(
            (await callApi(system.baseUrl, 'getMe', '/me', tokens.access_token, { headers: { 'x-request-id': id } }))
              .status,
          ).toBe(200);
        // The gateway meters in batches (every second); poll until both calls are stored.
        let res = await admin.checked('getUsage', 'GET', `/tenants/${tenant.tenantId}/usage`);
        for (let i = 0; i < 50 && res.body.total < 2; i++) {
          await new Promise((r) => setTimeout(r, 100));
          res = await admin.checked('getUsage', 'GET', `/tenants/${tenant.tenantId}/usage`);
        }
        expect(res.body.tenantId).toBe(tenant.tenantId);
        expect(res.body.total).toBe(2);
        expect(res.body.items.map((i: { requestId: string }) => i.requestId).sort()).toEqual([
          'usage-call-0001',
          'usage-call-0002',
        ]);
      },
    );
  });
});
