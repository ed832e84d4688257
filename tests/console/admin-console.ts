// The admin console (docs/admin-console.md) in real Chromium: sign-in with a tenant admin key and with the operator
// token, every page screenshotted into test-artifacts/admin-console/, and every action checked for its effect on the
// next request through the gateway or the token endpoint. Also: CSRF refusals change nothing, a tenant admin key
// cannot see or touch another tenant, the pages work with JavaScript disabled, sign-out and key revocation end the
// session, and sessions expire.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { IDLE_MS, MAX_AGE_MS, SessionStore } from '../../policies/console/sessions.js';
import { startPolicies } from '../../policies/service.js';
import { createLogger } from '../../common/log.js';
import { createTelemetry } from '../../common/telemetry.js';
import { launchBrowser } from '../support/browser.js';
import { consoleOf, press, row, shot, signIn as signInAt } from '../support/console.js';
import { startTestSystem } from '../support/system.js';
import {
  adminClient,
  setupMachineClient,
  setupTenant,
  type AdminClient,
  type MachineClientSetup,
  type TenantSetup,
} from '../support/admin.js';
import { callApi } from '../support/api.js';
import { personApi } from '../support/extensions.js';
import {
  authorizationRequest,
  basicAuth,
  clientCredentialsToken,
  discover,
  obtainTokens,
  postTokenForm,
} from '../support/oauth.js';

describe('admin-console', () => {
  const ALL = [
    'svc.profile.self.read',
    'svc.tenant.info.read',
    'svc.person.read',
    'svc.person.metadata.read',
    'svc.person.metadata.write',
  ];

  let system: System;
  let operator: AdminClient;
  let browser: Browser;
  let consoleUrl: string;
  let own: MachineClientSetup;
  let other: TenantSetup;
  let adminKey: { keyId: string; key: string };

  beforeAll(async () => {
    [system, browser] = await Promise.all([
      startTestSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' }),
      launchBrowser(),
    ]);
    operator = adminClient(system);
    consoleUrl = consoleOf(system.pdpUrl);
    own = await setupMachineClient(operator, { grant: ALL });
    other = await setupTenant(operator);
    adminKey = await operator.ok('POST', `/tenants/${own.tenantId}/admin-keys`);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const pageUrl = (tenantId: string, path: string) => `${consoleUrl}/tenants/${tenantId}/${path}`;

  const signIn = (context: BrowserContext, key: string) => signInAt(context, consoleUrl, key);

  /** client_credentials at the token endpoint for the own tenant's confidential app. */
  const tokenRequest = (secret = own.clientSecret) =>
    postTokenForm(
      system.authUrl,
      { grant_type: 'client_credentials', scope: ALL.join(' ') },
      { authorization: basicAuth(own.clientId, secret) },
    );
  const workloadToken = (secret = own.clientSecret): Promise<string> =>
    clientCredentialsToken(system.authUrl, { clientId: own.clientId, clientSecret: secret }, ALL.join(' '));
  const getMe = (token: string) => callApi(system.baseUrl, 'getMe', '/me', token);
  const getTenant = (token: string) => callApi(system.baseUrl, 'getTenant', '/tenant', token);

  /** Reloads `page` until `text` shows: the decision log and the meter are written in batches off the request path. */
  async function reloadUntil(page: Page, text: string): Promise<void> {
    for (let attempt = 0; attempt < 40 && !(await page.content()).includes(text); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await page.reload();
    }
    expect(await page.content()).toContain(text);
  }

  describe('signing in', () => {
    it('answers a wrong key with one generic message, whichever part was wrong, and never echoes it', async () => {
      const context = await browser.newContext();
      const wrong = [
        'not a key at all',
        `${adminKey.keyId}.wrong-secret-part`,
        `key_00000000000000000000000000.${adminKey.key.split('.')[1]}`,
        `${system.adminToken}x`,
      ];
      const messages = new Set<string>();
      for (const key of wrong) {
        const { page, response } = await signIn(context, key);
        expect(response.status()).toBe(401);
        messages.add(await page.getByRole('alert').innerText());
        expect(await page.content()).not.toContain(key);
        if (key === wrong[0]) await shot(page, 'sign-in');
        await page.close();
      }
      expect([...messages]).toEqual(['That key did not work. Check it and try again.']);
      await context.close();
    });
  });

  describe('a tenant admin', () => {
    let context: BrowserContext;
    let page: Page;
    let deniedRequestId: string;
    beforeAll(async () => {
      context = await browser.newContext();
      ({ page } = await signIn(context, adminKey.key));
    });
    afterAll(() => context.close());

    it(
      "signs in with the tenant admin key to the tenant's apps and " +
        'their granted capabilities; the key is in neither cookie nor page',
      async () => {
        expect(page.url()).toBe(pageUrl(own.tenantId, 'apps'));
        const response = (await page.goto(page.url()))!;
        const headers = response.headers();
        expect(headers['cache-control']).toBe('no-store');
        expect(headers['content-security-policy']).toMatch(
          /default-src 'none'.*style-src 'sha256-.*frame-ancestors 'none'/,
        );
        const app = row(page, own.clientName);
        await expect(app.getByRole('cell').last().innerText()).resolves.toBe([...ALL].sort().join('\n'));
        const cookies = await context.cookies();
        expect(cookies).toHaveLength(1);
        expect(cookies[0]).toMatchObject({
          name: 'console_session',
          httpOnly: true,
          sameSite: 'Strict',
          path: '/admin/console',
        });
        expect(cookies[0]!.value).not.toContain(adminKey.key.split('.')[1]);
        expect(await page.content()).not.toContain(adminKey.key.split('.')[1]);
        await shot(page, 'apps');
      },
    );

    it(
      "withdrawing a capability makes the app's next call with it " +
        '403 capability_not_granted; granting it again restores it',
      async () => {
        const token = await workloadToken();
        expect((await getTenant(token)).status).toBe(200);
        await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
        await page.getByLabel('svc.tenant.info.read').uncheck();
        await press(page, 'Save granted capabilities');
        await expect(page.getByRole('status').innerText()).resolves.toContain('Granted capabilities saved');
        const denied = await getTenant(token);
        expect(denied.status).toBe(403);
        expect(denied.body.error).toBe('capability_not_granted');
        deniedRequestId = denied.body.requestId;
        expect((await getMe(token)).status).toBe(200);
        await shot(page, 'app');
        await page.getByLabel('svc.tenant.info.read').check();
        await press(page, 'Save granted capabilities');
        expect((await getTenant(token)).status).toBe(200);
      },
    );

    it('asks before disabling the app and changes nothing until confirmed; Cancel goes back', async () => {
      const token = await workloadToken();
      await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
      await press(page, 'Disable app');
      const question = await page.getByRole('alert').innerText();
      expect(question).toMatch(/^Disable .+ tp_\S+\? Its tokens are refused from their next request/);
      // No code in the sentence: a 403 as a word (the app's generated name carries the process id, which may hold 403).
      expect(question).not.toMatch(/client_disabled|\b403\b/);
      expect((await getMe(token)).status).toBe(200);
      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Cancel' }).click()]);
      expect(page.url()).toBe(pageUrl(own.tenantId, `apps/${own.clientId}`));
      expect((await getMe(token)).status).toBe(200);
    });

    it(
      'disabling the app makes its tokens 403 client_disabled and ' +
        'its token requests invalid_client; enabling restores both',
      async () => {
        const token = await workloadToken();
        await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
        await press(page, 'Disable app');
        await press(page, 'Confirm');
        const denied = await getMe(token);
        expect([denied.status, denied.body.error]).toEqual([403, 'client_disabled']);
        const refused = await tokenRequest();
        expect([refused.status, refused.body.error]).toEqual([401, 'invalid_client']);
        await press(page, 'Enable app');
        expect((await getMe(token)).status).toBe(200);
        expect((await tokenRequest()).status).toBe(200);
      },
    );

    it("advancing a service account's epoch makes its older token 403 epoch_changed; a new token works", async () => {
      const old = await workloadToken();
      await page.goto(pageUrl(own.tenantId, 'service-accounts'));
      await expect(row(page, own.serviceAccountId).getByRole('cell').nth(4).innerText()).resolves.toBe('1');
      await press(page, 'Advance epoch of nightly sync');
      await press(page, 'Confirm');
      await expect(row(page, own.serviceAccountId).getByRole('cell').nth(4).innerText()).resolves.toBe('2');
      const denied = await getMe(old);
      expect([denied.status, denied.body.error]).toEqual([403, 'epoch_changed']);
      expect((await getMe(await workloadToken())).status).toBe(200);
      await shot(page, 'service-accounts');
    });

    it('disabling a service account makes its token 403 subject_revoked; enabling restores it', async () => {
      const token = await workloadToken();
      await page.goto(pageUrl(own.tenantId, 'service-accounts'));
      await press(page, 'Disable nightly sync');
      await press(page, 'Confirm');
      const denied = await getMe(token);
      expect([denied.status, denied.body.error]).toEqual([403, 'subject_revoked']);
      await press(page, 'Enable nightly sync');
      expect((await getMe(token)).status).toBe(200);
    });

    it(
      'creates a person, keeps the typed fields when the username is taken, ' +
        'finds them, and disabling their login refuses their sign-in',
      async () => {
        const person = {
          displayName: 'Console Person',
          username: `console-${Date.now().toString(36)}`,
          password: 'console password 1',
        };
        const signInAs = () =>
          fetch(`${system.authUrl}/account/apps`, {
            method: 'POST',
            redirect: 'manual',
            body: new URLSearchParams(person),
          }).then((r) => r.status);
        await page.goto(pageUrl(own.tenantId, 'persons'));
        const create = async (displayName: string, username = person.username) => {
          await page.getByLabel('Display name').fill(displayName);
          await page.getByLabel('Username (unique in this tenant)').fill(username);
          await page.getByLabel('Password (at least 8 characters)').fill(person.password);
          return press(page, 'Create person');
        };
        expect((await create(person.displayName)).status()).toBe(200);
        await expect(page.getByRole('status').innerText()).resolves.toContain(`can now sign in as ${person.username}`);
        await expect(row(page, person.username).count()).resolves.toBe(1);
        expect(await signInAs()).toBe(303);
        // Taken in any case: the username typed in capitals is the same name.
        const taken = await create('Someone Else', person.username.toUpperCase());
        expect(taken.status()).toBe(409);
        await expect(page.getByRole('alert').innerText()).resolves.toMatch(/username is taken in this tenant/);
        await expect(page.getByLabel('Display name').inputValue()).resolves.toBe('Someone Else');
        await expect(page.getByLabel('Password (at least 8 characters)').inputValue()).resolves.toBe('');
        await page.getByLabel('Find by username or name').fill(person.username.toUpperCase());
        await press(page, 'Find');
        await expect(page.getByRole('row').count()).resolves.toBe(2); // the header and the one person
        await press(page, `Disable login of ${person.displayName}`);
        await press(page, 'Confirm');
        await expect(row(page, person.username).getByRole('cell').nth(2).innerText()).resolves.toBe('disabled');
        expect(await signInAs()).toBe(401);
        await shot(page, 'persons');
      },
    );

    it(
      'registers a public app (keeping the form and naming every refused redirect URI in words), ' +
        'grants it a capability, ' +
        'and changes its redirect URIs: a person signs in through the new one, the old one is refused',
      async () => {
        const slug = `console-app-${Date.now().toString(36)}`;
        const clientId = `tp_${own.clientId.split('_')[1]}_${slug}`;
        await page.goto(pageUrl(own.tenantId, 'apps'));
        await page.getByLabel('Name people see on the consent page').fill('Console App');
        await page.getByLabel(/^Slug/).fill(slug);
        const typed = 'not a uri\nhttps://console-app.example/cb\nhttp://console-app.example/cb';
        await page.getByLabel('Redirect URIs, one per line').fill(typed);
        const refused = await press(page, 'Register app');
        expect(refused.status()).toBe(422);
        const said = await page.getByRole('alert').innerText();
        expect(said).toContain('not a uri: not an absolute URI');
        expect(said).toContain(
          'http://console-app.example/cb: http is allowed only for 127.0.0.1 and [::1] (use https)',
        );
        expect(said).not.toContain('https://console-app.example/cb');
        expect(said).not.toMatch(/redirectUris/);
        await expect(page.getByLabel(/^Slug/).inputValue()).resolves.toBe(slug);
        await expect(page.getByLabel('Redirect URIs, one per line').inputValue()).resolves.toBe(typed);
        await page.getByLabel('Redirect URIs, one per line').fill('https://console-app.example/cb\n');
        expect((await press(page, 'Register app')).status()).toBe(200);
        expect(page.url()).toBe(pageUrl(own.tenantId, `apps/${clientId}`));
        await expect(page.getByRole('status').innerText()).resolves.toContain(`registered as ${clientId}`);
        // Each capability with its description from the catalogue.
        await expect(page.getByText("Read the tenant's public identity").count()).resolves.toBe(1);
        await page.getByLabel('svc.profile.self.read').check();
        await press(page, 'Save granted capabilities');
        await page
          .getByLabel('Redirect URIs, one per line (the next authorization request uses them)')
          .fill('https://console-app.example/v2/cb');
        await press(page, 'Save settings');
        await expect(page.getByRole('status').innerText()).resolves.toContain('Settings of Console App saved');
        await shot(page, 'app-settings');

        const app = { authUrl: system.authUrl, clientId, redirectUri: 'https://console-app.example/v2/cb' };
        const tokens = await obtainTokens(browser, app, own, 'svc.profile.self.read');
        expect((await getMe(tokens.access_token)).status).toBe(200);
        const old = await authorizationRequest(
          await discover({ ...app, redirectUri: 'https://console-app.example/cb' }),
          'https://console-app.example/cb',
          'svc.profile.self.read',
        );
        expect((await fetch(old.url, { redirect: 'manual' })).status).toBe(400);
      },
    );

    it("marks an app's stored redirect URIs that would be refused today; saving its settings needs them replaced", async () => {
      const app = await operator.ok('POST', `/tenants/${own.tenantId}/clients`, {
        slug: `console-legacy-${Date.now().toString(36)}`,
        name: 'Console Legacy',
        kind: 'third_party',
        type: 'public',
        redirectUris: ['https://console-legacy.example/cb'],
      });
      const stored = ['http://console-legacy.example/cb', 'https://console-legacy.example/cb'];
      // As registered before the rule existed.
      await system.db
        .knex('clients')
        .where({ id: app.clientId })
        .update({ redirect_uris: JSON.stringify(stored) });
      await page.goto(pageUrl(own.tenantId, `apps/${app.clientId}`));
      const mark = page.getByRole('note', { name: /would be refused today/ });
      await expect(mark.innerText()).resolves.toContain(
        'http://console-legacy.example/cb: http is allowed only for 127.0.0.1 and [::1] (use https)',
      );
      await expect(mark.getByRole('listitem').count()).resolves.toBe(1);
      await shot(page, 'app-redirect-uri-to-replace');

      const redirects = page.getByLabel('Redirect URIs, one per line (the next authorization request uses them)');
      await page.getByLabel('Name people see on the consent page').fill('Console Legacy 2');
      expect((await press(page, 'Save settings')).status()).toBe(422);
      await expect(page.getByRole('alert').innerText()).resolves.toContain('http://console-legacy.example/cb: http');
      await redirects.fill('https://console-legacy.example/cb\nhttp://127.0.0.1:8400/cb');
      await press(page, 'Save settings');
      await expect(page.getByRole('status').innerText()).resolves.toContain('Settings of Console Legacy 2 saved');
      await expect(page.getByRole('note', { name: /would be refused today/ }).count()).resolves.toBe(0);
    });

    it(
      'tells an admin whose save would overwrite a change another admin made since the page was shown (412), ' +
        'keeps what they typed, shows what is stored now, and saves on the second press',
      async () => {
        const app = await operator.ok('POST', `/tenants/${own.tenantId}/clients`, {
          slug: `console-race-${Date.now().toString(36)}`,
          name: 'Console Race',
          kind: 'third_party',
          type: 'public',
          redirectUris: ['https://console-race.example/cb'],
        });
        await page.goto(pageUrl(own.tenantId, `apps/${app.clientId}`));
        await page.getByLabel('Name people see on the consent page').fill('Typed in the console');
        // Another admin (through the API) changes the app while this page is open.
        await operator.ok('PATCH', `/clients/${app.clientId}`, { name: 'Changed meanwhile' });

        expect((await press(page, 'Save settings')).status()).toBe(412);
        await expect(page.getByRole('alert').innerText()).resolves.toBe(
          'Someone changed this since you opened the page, so nothing was saved. ' +
            'Check what is stored now, then save again to replace it.',
        );
        await expect(page.locator('#stored-now').innerText()).resolves.toContain('Changed meanwhile');
        await expect(page.getByLabel('Name people see on the consent page').inputValue()).resolves.toBe(
          'Typed in the console',
        );
        expect((await operator.ok('GET', `/clients/${app.clientId}`)).name).toBe('Changed meanwhile');
        await shot(page, 'app-changed-meanwhile');

        await press(page, 'Save settings');
        await expect(page.getByRole('status').innerText()).resolves.toContain('Settings of Typed in the console saved');
        expect((await operator.ok('GET', `/clients/${app.clientId}`)).name).toBe('Typed in the console');
      },
    );

    it(
      'tells an admin whose grant save would overwrite a grant changed since the page was shown (412), in words, ' +
        'with what is granted now and the boxes as they ticked them, and saves on the second press',
      async () => {
        const app = await operator.ok('POST', `/tenants/${own.tenantId}/clients`, {
          slug: `grant-race-${Date.now().toString(36)}`,
          name: 'Grant Race',
          kind: 'third_party',
          type: 'public',
          redirectUris: ['https://grant-race.example/cb'],
        });
        const grantPath = `/tenants/${own.tenantId}/grants/${app.clientId}`;
        await operator.ok('PUT', grantPath, { capabilities: ['svc.profile.self.read'] });
        await page.goto(pageUrl(own.tenantId, `apps/${app.clientId}`));
        await page.getByLabel('svc.tenant.info.read').check();
        // Another admin (through the API) replaces the grant while this page is open.
        await operator.ok('PUT', grantPath, { capabilities: ['svc.person.read'] });

        expect((await press(page, 'Save granted capabilities')).status()).toBe(412);
        await expect(page.getByRole('alert').innerText()).resolves.toBe(
          'Someone changed this since you opened the page, so nothing was saved. ' +
            'Check what is stored now, then save again to replace it.',
        );
        await expect(page.locator('#granted-now').innerText()).resolves.toBe(
          'Granted now: svc.person.read. The boxes below are as you ticked them.',
        );
        const ticked = async () => Promise.all(ALL.map((cap) => page.getByLabel(cap, { exact: true }).isChecked()));
        await expect(ticked()).resolves.toEqual([true, true, false, false, false]);
        expect((await operator.ok('GET', grantPath)).capabilities).toEqual(['svc.person.read']);
        await shot(page, 'grant-changed-meanwhile');

        await press(page, 'Save granted capabilities');
        await expect(page.getByRole('status').innerText()).resolves.toBe(
          'Granted capabilities saved for Grant Race: svc.profile.self.read, svc.tenant.info.read.',
        );
        expect((await operator.ok('GET', grantPath)).capabilities).toEqual([
          'svc.profile.self.read',
          'svc.tenant.info.read',
        ]);
      },
    );

    it(
      'registers a confidential app and shows its secret once, ' +
        'with a Copy button that copies it; the secret authenticates the app',
      async () => {
        const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
        try {
          const { page } = await signIn(context, adminKey.key);
          const slug = `console-server-${Date.now().toString(36)}`;
          await page.goto(pageUrl(own.tenantId, 'apps'));
          await page.getByLabel('Name people see on the consent page').fill('Console Server');
          await page.getByLabel(/^Slug/).fill(slug);
          await page.getByLabel(/^Confidential/).check();
          await page.getByLabel('Redirect URIs, one per line').fill('https://console-server.example/cb');
          expect((await press(page, 'Register app')).status()).toBe(201);
          const secret = await page.getByRole('status', { name: 'New client secret' }).innerText();
          const copy = page.locator('button[data-copy="new-secret"]');
          await copy.click();
          await page.waitForFunction(() => document.querySelector('button[data-copy]')?.textContent !== 'Copy');
          await expect(copy.innerText()).resolves.toBe('Copied');
          expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
          await shot(page, 'new-app-secret');
          const clientId = `tp_${own.clientId.split('_')[1]}_${slug}`;
          // Authenticated: the grant is refused for what it is (400), not the client (401 invalid_client).
          const form = { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token' };
          expect(
            (await postTokenForm(system.authUrl, form, { authorization: basicAuth(clientId, secret) })).status,
          ).toBe(400);
          expect(
            (await postTokenForm(system.authUrl, form, { authorization: basicAuth(clientId, `${secret}x`) })).status,
          ).toBe(401);
          await page.goto(pageUrl(own.tenantId, `apps/${clientId}`));
          expect(await page.content()).not.toContain(secret);
        } finally {
          await context.close();
        }
      },
    );

    it(
      'registers a fapi2 app from pasted public keys, saying in place when the keys are no JSON and naming a ' +
        'private key it refuses; the app page shows its security settings and offers no secret',
      async () => {
        const pair = await generateKeyPair('ES256', { extractable: true });
        const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'console-key' };
        const privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'pasted-private' };
        const slug = `console-fapi-${Date.now().toString(36)}`;
        await page.goto(pageUrl(own.tenantId, 'apps'));
        await page.getByLabel('Name people see on the consent page').fill('Console FAPI');
        await page.getByLabel(/^Slug/).fill(slug);
        await page.getByLabel(/^Confidential/).check();
        await page.getByLabel('Redirect URIs, one per line').fill('https://console-fapi.example/cb');
        await page.getByLabel('FAPI 2.0 Security Profile').check();
        const keys = page.getByLabel(/^Public keys for private key JWT/);
        // In place, before anything is sent: the browser's own validation message.
        await keys.fill('{"keys": [');
        await expect(keys.evaluate((t: HTMLTextAreaElement) => t.validationMessage)).resolves.toMatch(/not valid JSON/);
        await keys.fill(JSON.stringify({ keys: [privateJwk] }));
        await expect(keys.evaluate((t: HTMLTextAreaElement) => t.validationMessage)).resolves.toBe('');
        const refused = await press(page, 'Register app');
        expect(refused.status()).toBe(422);
        await expect(page.getByRole('alert').innerText()).resolves.toMatch(
          /^jwks: key "pasted-private" holds private member d: register the public key only\.$/i,
        );
        await expect(page.getByLabel('FAPI 2.0 Security Profile').isChecked()).resolves.toBe(true);
        await keys.fill(JSON.stringify({ keys: [publicJwk] }));
        expect((await press(page, 'Register app')).status()).toBe(200);
        const clientId = `tp_${own.clientId.split('_')[1]}_${slug}`;
        expect(page.url()).toBe(pageUrl(own.tenantId, `apps/${clientId}`));
        const facts = await page.locator('dl').first().innerText();
        expect(facts).toMatch(/Token endpoint authentication\s+private key JWT/);
        expect(facts).toMatch(/Registered public keys\s+console-key/);
        expect(facts).toMatch(/DPoP-bound tokens\s+required/);
        expect(facts).toMatch(/Pushed authorization requests\s+required/);
        expect(facts).toMatch(/Security profile\s+FAPI 2\.0/);
        await expect(page.getByRole('heading', { name: 'Client secret' }).count()).resolves.toBe(0);
        expect(await operator.ok('GET', `/tenants/${own.tenantId}/clients?limit=100`)).toMatchObject({
          items: expect.arrayContaining([
            expect.objectContaining({ clientId, securityProfile: 'fapi2', jwks: { keys: [publicJwk] } }),
          ]),
        });
        await shot(page, 'app-fapi2');
      },
    );

    it(
      'shows the apps a person let in, ' + "and ending every session of their login refuses the app's token at once",
      async () => {
        const app = {
          authUrl: system.authUrl,
          clientId: own.clientId,
          clientSecret: own.clientSecret,
          redirectUri: own.redirectUri,
        };
        const tokens = await obtainTokens(browser, app, own, 'svc.profile.self.read');
        expect((await getMe(tokens.access_token)).status).toBe(200);
        await page.goto(pageUrl(own.tenantId, 'persons'));
        await page.getByLabel('Find by username or name').fill(own.username);
        await press(page, 'Find');
        await Promise.all([page.waitForNavigation(), row(page, own.username).getByRole('link').click()]);
        expect(page.url()).toBe(pageUrl(own.tenantId, `persons/${own.accountId}`));
        await expect(row(page, own.clientId).getByRole('cell').last().innerText()).resolves.toBe('active');
        await press(page, 'End every session');
        await expect(page.getByRole('main').innerText()).resolves.toContain('needs a new consent');
        await press(page, 'Confirm');
        await expect(page.getByRole('status').innerText()).resolves.toMatch(
          new RegExp(`^Every session of .* \\(${own.username}\\) is ended\\.$`),
        );
        await expect(row(page, own.clientId).getByRole('cell').last().innerText()).resolves.toMatch(/^ended /);
        expect((await getMe(tokens.access_token)).body.error).toBe('subject_revoked');
        await shot(page, 'person');
      },
    );

    it(
      'rotating shows the next secret once, both secrets work until promotion, ' +
        'then the old one fails at the token endpoint',
      async () => {
        await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
        const shown = await press(page, 'Create a next secret');
        expect(shown.status()).toBe(201);
        const next = await page.getByRole('status', { name: 'New client secret' }).innerText();
        expect(next.length).toBeGreaterThan(20);
        await shot(page, 'secret');
        expect((await tokenRequest(own.clientSecret)).status).toBe(200);
        expect((await tokenRequest(next)).status).toBe(200);
        await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
        expect(await page.content()).not.toContain(next);
        await press(page, 'Promote the next secret');
        await press(page, 'Confirm');
        await expect(page.getByRole('status').innerText()).resolves.toContain('the old one no longer works');
        const old = await tokenRequest(own.clientSecret);
        expect([old.status, old.body.error]).toEqual([401, 'invalid_client']);
        expect((await tokenRequest(next)).status).toBe(200);
        own.clientSecret = next;
      },
    );

    it('registers an extension whose version-1 schema the API then enforces', async () => {
      await page.goto(pageUrl(own.tenantId, 'extensions'));
      await page.getByLabel('Owning app').selectOption(own.clientId);
      await page.getByLabel('Name').fill('Loyalty <notes>');
      await page
        .getByLabel('JSON Schema for version 1')
        .fill(JSON.stringify({ type: 'object', properties: { points: { type: 'integer' } }, required: ['points'] }));
      await press(page, 'Register extension');
      const registered = row(page, 'Loyalty <notes>');
      const extensionId = await registered.getByRole('cell').first().innerText();
      expect(extensionId).toMatch(/^ext_/);
      await shot(page, 'extensions');
      const api = personApi(system.baseUrl);
      const token = await workloadToken();
      const created = await api.put(
        token,
        own.personId,
        extensionId,
        { schemaVersion: 1, data: { points: 3 } },
        { 'if-none-match': '*' },
      );
      expect(created.status).toBe(201);
      const invalid = await api.put(
        token,
        own.personId,
        extensionId,
        { schemaVersion: 1, data: { points: 'many' } },
        { 'if-match': created.headers.get('etag')! },
      );
      expect([invalid.status, invalid.body.error]).toEqual([422, 'schema_invalid']);
    });

    it('deletes an app after asking; an app whose records are stored offers Disable instead', async () => {
      const { clientId } = await operator.ok('POST', `/tenants/${own.tenantId}/clients`, {
        slug: 'short-lived',
        name: 'Short lived',
        kind: 'third_party',
        type: 'public',
        redirectUris: ['https://short.example/callback'],
      });
      await page.goto(pageUrl(own.tenantId, `apps/${clientId}`));
      await press(page, 'Delete app');
      await expect(page.getByRole('alert').innerText()).resolves.toBe(
        `Delete Short lived ${clientId}? Its tokens are refused from their next request, and its secrets, grant, ` +
          'consents and service account are gone for good.',
      );
      await press(page, 'Confirm');
      expect(page.url()).toBe(pageUrl(own.tenantId, 'apps'));
      await expect(page.getByRole('status').innerText()).resolves.toBe('Short lived is deleted.');
      await expect(row(page, 'Short lived').count()).resolves.toBe(0);

      // The app of this suite stores a record (the extension test above): its page says so and offers no Delete.
      await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
      await expect(page.getByRole('button', { name: 'Delete app' }).count()).resolves.toBe(0);
      await expect(page.locator('#kept-records').innerText()).resolves.toMatch(/owns 1 stored record .*Disable it/s);
      expect((await getMe(await workloadToken())).status).toBe(200);
    });

    it(
      'refuses a schema that is not JSON or not a JSON Schema with the ' +
        'form as typed and a sentence that says which, and registers nothing',
      async () => {
        await page.goto(pageUrl(own.tenantId, 'extensions'));
        for (const [schema, why] of [
          ['{not json', /^The schema is not valid JSON \(/],
          ['{"type": "no-such-type"}', /^The JSON Schema: /],
        ] as const) {
          await page.getByLabel('Name').fill('Broken');
          await page.getByLabel('JSON Schema for version 1').fill(schema);
          const response = await press(page, 'Register extension');
          expect(response.status()).toBe(422);
          await expect(page.getByRole('alert').innerText()).resolves.toMatch(why);
          await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Broken');
          await expect(page.getByLabel('JSON Schema for version 1').inputValue()).resolves.toBe(schema);
          await expect(page.getByLabel('JSON Schema for version 1').getAttribute('aria-invalid')).resolves.toBe('true');
        }
        await shot(page, 'extension-refused');
        await page.goto(pageUrl(own.tenantId, 'extensions'));
        await expect(row(page, 'Broken').count()).resolves.toBe(0);
      },
    );

    it(
      'answers malformed input with a page, never a 5xx: unreadable or ' +
        'unstorable ids, unknown capabilities and statuses, NUL in a name',
      async () => {
        for (const [path, status] of [
          ['apps/%00', 404],
          ['apps/%E0%A4%A', 400],
          ['service-accounts/%00/epoch', 404],
        ] as const)
          expect([
            path,
            (await context.request.get(pageUrl(own.tenantId, path), { maxRedirects: 0 })).status(),
          ]).toEqual([path, status]);
        await page.goto(pageUrl(own.tenantId, 'apps'));
        const _csrf = await page.locator('input[name="_csrf"]').first().inputValue();
        const posts = [
          [`apps/${own.clientId}/grant`, { _csrf, capabilities: 'svc.no.such' }, 422],
          [`apps/${own.clientId}/status`, { _csrf, status: 'sleeping' }, 422],
          [`service-accounts/${own.serviceAccountId}/status`, { _csrf }, 422],
          ['extensions', { _csrf, clientId: own.clientId, name: 'a\u0000b', schema: '{}' }, 422],
          ['extensions', { _csrf, clientId: 'tp_\u0000', name: 'x', schema: '{}' }, 422],
          [`apps/%00/status`, { _csrf, status: 'disabled' }, 422],
          // Confirmed changes of objects that do not exist answer the 404 page, never a redirect that reports success.
          ['admin-keys/key_00000000000000000000000000/revoke', { _csrf, confirmed: 'yes' }, 404],
          ['persons/acc_00000000000000000000000000/sessions/revoke', { _csrf, confirmed: 'yes' }, 404],
          ['service-accounts/acc_00000000000000000000000000/epoch', { _csrf, confirmed: 'yes' }, 404],
        ] as const;
        for (const [path, form, status] of posts) {
          const res = await context.request.post(pageUrl(own.tenantId, path), { form, maxRedirects: 0 });
          expect([path, res.status()]).toEqual([path, status]);
          expect(await res.text()).toContain('<h1>');
        }
        expect((await getTenant(await workloadToken())).status).toBe(200);
      },
    );

    it('finds the decision of a denied request by its request id, with why in words and its check', async () => {
      await page.goto(pageUrl(own.tenantId, 'decisions'));
      await page.getByLabel('Request id').fill(deniedRequestId);
      await press(page, 'Search');
      for (let attempt = 0; attempt < 40 && (await row(page, deniedRequestId).count()) === 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        await page.reload();
      }
      const cells = await row(page, deniedRequestId).getByRole('cell').allInnerTexts();
      expect(cells.slice(3)).toEqual([
        'svc.tenant.info.read',
        'denied',
        "The tenant does not grant the app this capability. Fix it: the app's grant capability_not_granted",
        'the tenant grants the app the capability', // the check that decided, in words
      ]);
      await expect(page.getByRole('row').count()).resolves.toBe(2); // the header row and this one
      await shot(page, 'decisions');
    });

    it('filters decisions by app, outcome, deny code and capability, and pages to older ones', async () => {
      // 120 decisions of one app, written as the PDP writes them; every second one a denial.
      const clientId = `tp_paging_${Date.now().toString(36)}`;
      await system.db.knex('decision_logs').insert(
        Array.from({ length: 120 }, (_, i) => ({
          request_id: `paging-${String(i).padStart(3, '0')}`,
          tenant_id: own.tenantId,
          client_id: clientId,
          subject: own.personId,
          capability: i % 2 ? 'svc.person.read' : 'svc.profile.self.read',
          allow: i % 2 === 0,
          code: i % 2 ? 'capability_not_granted' : null,
          check_name: i % 2 ? 'capability.tenant_grant' : 'allow',
        })),
      );
      const requestIds = async () =>
        (await page.getByRole('row').allInnerTexts()).slice(1).map((r) => r.split('\t')[1]);
      await page.goto(`${pageUrl(own.tenantId, 'decisions')}?clientId=${clientId}`);
      const first = await requestIds();
      expect(first).toHaveLength(100);
      expect(first[0]).toBe('paging-119'); // newest first
      await page.getByRole('link', { name: 'Older decisions' }).click();
      await page.waitForLoadState();
      expect(await requestIds()).toEqual(
        Array.from({ length: 20 }, (_, i) => `paging-${String(19 - i).padStart(3, '0')}`),
      );
      await expect(page.getByRole('link', { name: 'Older decisions' }).count()).resolves.toBe(0);

      await page.goto(`${pageUrl(own.tenantId, 'decisions')}?clientId=${clientId}`);
      await page.getByLabel('Outcome').selectOption('deny');
      await page.getByLabel('Why denied').selectOption('capability_not_granted');
      await page.getByLabel('Capability').selectOption('svc.person.read');
      await press(page, 'Search');
      const denied = await requestIds();
      expect(denied).toHaveLength(60);
      expect(denied.every((id) => Number(id!.slice(-3)) % 2 === 1)).toBe(true);
      // the filters stay chosen
      await expect(page.getByLabel('Why denied').inputValue()).resolves.toBe('capability_not_granted');
      await page.getByLabel('Outcome').selectOption('allow');
      await press(page, 'Search');
      expect(await requestIds()).toEqual([]); // allows of a capability never allowed here
      await shot(page, 'decisions-filtered');
    });

    it("shows the app's metered calls on the day they were made", async () => {
      await page.goto(pageUrl(own.tenantId, 'usage'));
      await reloadUntil(page, own.clientId);
      // The UTC day of the latest call, from the rows themselves (a run crossing midnight still finds its row).
      const { rows } = await system.db.knex.raw(
        `select to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD') ` +
          `as day from usage_records where tenant_id = ? and client_id = ?`,
        [own.tenantId, own.clientId],
      );
      const calls = Number(
        await row(page, rows[0].day).filter({ hasText: own.clientId }).getByRole('cell').last().innerText(),
      );
      expect(calls).toBeGreaterThan(5);
      await shot(page, 'usage');
    });

    describe('CSRF', () => {
      const csrfOf = (p: Page) => p.locator('input[name="_csrf"]').first().inputValue();

      it('refuses a POST without or with a wrong token with a 403 page, and changes nothing', async () => {
        const token = await workloadToken();
        const target = pageUrl(own.tenantId, `apps/${own.clientId}`);
        for (const form of [
          { status: 'disabled' },
          { status: 'disabled', _csrf: 'wrong' },
          { status: 'disabled', _csrf: '' },
        ] as Record<string, string>[]) {
          const res = await context.request.post(`${target}/status`, { form, maxRedirects: 0 });
          expect(res.status()).toBe(403);
          expect(await res.text()).toContain('nothing was changed');
        }
        const grant = await context.request.post(`${target}/grant`, { form: { _csrf: 'wrong' }, maxRedirects: 0 });
        expect(grant.status()).toBe(403);
        const epoch = await context.request.post(
          pageUrl(own.tenantId, `service-accounts/${own.serviceAccountId}/epoch`),
          { maxRedirects: 0 },
        );
        expect(epoch.status()).toBe(403);
        expect((await getMe(token)).status).toBe(200);
        expect((await getTenant(token)).status).toBe(200);
        await page.setContent(await grant.text());
        await shot(page, 'forbidden');
      });

      it("cannot see another tenant's pages or act on its objects: a 404 page, and nothing changes", async () => {
        for (const path of ['apps', 'service-accounts', 'extensions', 'decisions', 'usage', `apps/${other.clientId}`]) {
          const response = (await page.goto(pageUrl(other.tenantId, path)))!;
          expect(response.status()).toBe(404);
          await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Not found');
          expect(await page.content()).not.toContain(other.clientName);
        }
        await shot(page, 'not-found');
        expect((await page.goto(`${consoleUrl}/tenants`))!.status()).toBe(404);
        await page.goto(pageUrl(own.tenantId, 'apps'));
        const _csrf = await csrfOf(page);
        const attempts = [
          [pageUrl(other.tenantId, `apps/${other.clientId}/status`), { _csrf, status: 'disabled' }],
          [pageUrl(own.tenantId, `apps/${other.clientId}/status`), { _csrf, status: 'disabled' }],
          [pageUrl(own.tenantId, `apps/${other.clientId}/grant`), { _csrf }],
          [pageUrl(own.tenantId, `service-accounts/${other.accountId}/epoch`), { _csrf }],
          [pageUrl(own.tenantId, `service-accounts/${other.accountId}/status`), { _csrf, status: 'disabled' }],
          [pageUrl(own.tenantId, 'extensions'), { _csrf, clientId: other.clientId, name: 'sneaky', schema: '{}' }],
        ] as const;
        for (const [url, form] of attempts) {
          const res = await context.request.post(url, { form, maxRedirects: 0 });
          expect([url, res.status()]).toEqual([url, 404]);
        }
        const knex = system.db.knex;
        await expect(knex('clients').where({ id: other.clientId }).first('status')).resolves.toEqual({
          status: 'active',
        });
        await expect(knex('accounts').where({ id: other.accountId }).first('status', 'epoch')).resolves.toEqual({
          status: 'active',
          epoch: 1,
        });
        await expect(operator.ok('GET', `/tenants/${other.tenantId}/grants/${other.clientId}`)).resolves.toMatchObject({
          capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'],
        });
        await expect(knex('extensions').where({ name: 'sneaky' }).first()).resolves.toBeUndefined();
      });
    });

    it('signs out: the old session id no longer opens a page', async () => {
      const [cookie] = await context.cookies();
      await page.goto(pageUrl(own.tenantId, 'apps'));
      await press(page, 'Sign out');
      await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe('Signed out');
      await shot(page, 'signed-out');
      const replay = await fetch(pageUrl(own.tenantId, 'apps'), {
        headers: { cookie: `console_session=${cookie!.value}` },
        redirect: 'manual',
      });
      expect([replay.status, replay.headers.get('location')]).toEqual([303, '/admin/console/sign-in']);
    });
  });

  describe('the operator', () => {
    it('signs in with the operator token, picks a tenant and manages it', async () => {
      const context = await browser.newContext();
      const { page } = await signIn(context, system.adminToken);
      expect(page.url()).toBe(`${consoleUrl}/tenants`);
      await expect(row(page, own.tenantName).count()).resolves.toBe(1);
      await expect(row(page, other.tenantName).count()).resolves.toBe(1);
      await shot(page, 'tenants');
      await page.getByRole('link', { name: other.tenantName, exact: true }).click();
      await page.waitForURL(pageUrl(other.tenantId, 'apps'));
      await expect(row(page, other.clientName).count()).resolves.toBe(1);
      await context.close();
    });

    it(
      'creates a tenant (keeping the form when the label is taken), sets its plan and limits, ' +
        'suspends it after confirming, and issues and revokes its admin keys',
      async () => {
        const context = await browser.newContext();
        try {
          const { page } = await signIn(context, system.adminToken);
          const label = `console-t-${Date.now().toString(36)}`;
          const create = async (displayName: string) => {
            await page.goto(`${consoleUrl}/tenants`);
            await page.getByLabel('Display name').fill(displayName);
            await page.getByLabel(/^Label/).fill(label);
            await page.getByLabel('Plan').selectOption('L1');
            return press(page, 'Create tenant');
          };
          expect((await create('Console Tenant')).status()).toBe(200);
          await expect(page.getByRole('status').innerText()).resolves.toContain(
            `Console Tenant is created (${label}, plan L1)`,
          );
          const tenantId = new URL(page.url()).pathname.split('/')[4]!;
          const taken = await create('Second Try');
          expect(taken.status()).toBe(409);
          await expect(page.getByRole('alert').innerText()).resolves.toMatch(/Tenant label is taken/);
          await expect(page.getByLabel('Display name').inputValue()).resolves.toBe('Second Try');

          await page.goto(pageUrl(tenantId, 'settings'));
          await page.getByLabel('Plan').selectOption('L2');
          await page.getByLabel('Whole tenant: requests').fill('5000');
          await page.getByLabel('Each account: requests').fill('0');
          // The browser's own check of the field would stop this; the server's answer is what is tested.
          await page
            .locator('form:has(button:text-is("Save settings"))')
            .evaluate((form: HTMLFormElement) => void (form.noValidate = true));
          expect((await press(page, 'Save settings')).status()).toBe(422);
          await expect(page.getByRole('alert').innerText()).resolves.toBe(
            "Each account's requests must be at least 1.",
          );
          await expect(page.getByLabel('Whole tenant: requests').inputValue()).resolves.toBe('5000');
          await page.getByLabel('Each account: requests').fill('200');
          await press(page, 'Save settings');
          expect(
            await operator
              .ok('GET', `/tenants?limit=100`)
              .then((p) => p.items.find((t: { tenantId: string }) => t.tenantId === tenantId)),
          ).toMatchObject({
            plan: 'L2',
            status: 'active',
            rateLimit: { tenant: { points: 5000 }, account: { points: 200 } },
          });

          await page.getByLabel('Status').selectOption('suspended');
          await press(page, 'Save settings');
          await expect(page.getByRole('main').innerText()).resolves.toContain(
            'Every token of its apps is refused from its next request, and no new ones are issued',
          );
          await press(page, 'Confirm');
          expect(
            (await operator.ok('GET', `/tenants?status=suspended&limit=100`)).items.map(
              (t: { tenantId: string }) => t.tenantId,
            ),
          ).toContain(tenantId);

          expect((await press(page, 'Create an admin key')).status()).toBe(201);
          const key = await page.getByRole('status', { name: 'New admin key' }).innerText();
          const keyId = key.split('.')[0]!;
          const asKey = adminClient(system, key);
          expect((await asKey.call('GET', `/tenants/${tenantId}/clients`)).status).toBe(200);
          await page.goto(pageUrl(tenantId, 'settings'));
          await expect(row(page, keyId).count()).resolves.toBe(1);
          expect(await page.content()).not.toContain(key);
          await shot(page, 'tenant-settings');
          await press(page, `Revoke ${keyId}`);
          await press(page, 'Confirm');
          await expect(page.getByRole('status').innerText()).resolves.toContain(`${keyId} is revoked`);
          expect((await asKey.call('GET', `/tenants/${tenantId}/clients`)).status).toBe(401);
        } finally {
          await context.close();
        }
      },
    );
  });

  describe("a tenant admin's settings", () => {
    it(
      "change the tenant's name and limits within the plan's ceiling, " +
        'and offer neither plan, status nor admin keys',
      async () => {
        const context = await browser.newContext();
        try {
          const { page } = await signIn(context, adminKey.key);
          await page.goto(pageUrl(own.tenantId, 'settings'));
          await expect(page.getByLabel('Plan').count()).resolves.toBe(0);
          await expect(page.getByLabel('Status').count()).resolves.toBe(0);
          await expect(page.getByRole('button', { name: 'Create an admin key' }).count()).resolves.toBe(0);
          await page.getByLabel('Each account: requests').fill('1000000');
          await page.getByLabel('Each account: window in seconds').fill('1');
          // The field's maximum is the plan's ceiling, so the browser would stop this; the server's answer is tested.
          await expect(page.getByLabel('Each account: requests').getAttribute('max')).resolves.toBe('6000');
          await page
            .locator('form:has(button:text-is("Save settings"))')
            .evaluate((form: HTMLFormElement) => void (form.noValidate = true));
          expect((await press(page, 'Save settings')).status()).toBe(403);
          await expect(page.getByRole('alert').innerText()).resolves.toMatch(/beyond the plan's ceiling/);
          await page.getByLabel('Each account: requests').fill('50');
          await page.getByLabel('Each account: window in seconds').fill('60');
          await page.getByLabel('Display name').fill(`${own.tenantName} (renamed)`);
          await press(page, 'Save settings');
          await expect(page.getByRole('status').innerText()).resolves.toContain('(renamed) saved');
          const listed = await operator.ok('GET', '/tenants?limit=100');
          expect(listed.items.find((t: { tenantId: string }) => t.tenantId === own.tenantId)).toMatchObject({
            displayName: `${own.tenantName} (renamed)`,
            rateLimit: { account: { points: 50, durationS: 60 } },
          });
          // The operator's tenant pages are refused to a tenant key.
          expect((await page.goto(`${consoleUrl}/tenants`))!.status()).toBe(404);
        } finally {
          await context.close();
        }
      },
    );

    it(
      'tell an admin whose save would overwrite settings changed since the page was shown (412), in words, keep ' +
        'what they typed beside what is stored now, and save on the second press',
      async () => {
        const context = await browser.newContext();
        try {
          const { page } = await signIn(context, adminKey.key);
          await page.goto(pageUrl(own.tenantId, 'settings'));
          await page.getByLabel('Display name').fill('Typed in the settings');
          // The operator (through the API) renames the tenant while this page is open.
          await operator.ok('PATCH', `/tenants/${own.tenantId}`, { displayName: 'Renamed meanwhile' });

          expect((await press(page, 'Save settings')).status()).toBe(412);
          await expect(page.getByRole('alert').innerText()).resolves.toBe(
            'Someone changed this since you opened the page, so nothing was saved. ' +
              'Check what is stored now, then save again to replace it.',
          );
          await expect(page.locator('#stored-now').innerText()).resolves.toMatch(
            /^Display name stored now\s+Renamed meanwhile\s+Rate limits stored now/,
          );
          await expect(page.getByLabel('Display name').inputValue()).resolves.toBe('Typed in the settings');
          expect((await operator.ok('GET', `/tenants/${own.tenantId}`)).displayName).toBe('Renamed meanwhile');
          await shot(page, 'settings-changed-meanwhile');

          await press(page, 'Save settings');
          await expect(page.getByRole('status').innerText()).resolves.toBe('Settings of Typed in the settings saved.');
          expect((await operator.ok('GET', `/tenants/${own.tenantId}`)).displayName).toBe('Typed in the settings');
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('with JavaScript disabled', () => {
    it('every page renders and a form works: advancing the epoch refuses the older token', async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const { page } = await signIn(context, adminKey.key);
      for (const path of [
        'apps',
        `apps/${own.clientId}`,
        'persons',
        'service-accounts',
        'extensions',
        'decisions',
        'usage',
        'audit',
        'export',
        'settings',
      ]) {
        const response = (await page.goto(pageUrl(own.tenantId, path)))!;
        expect([path, response.status()]).toEqual([path, 200]);
        await expect(page.getByRole('main').getByRole('heading', { level: 1 }).count()).resolves.toBe(1);
      }
      const old = await workloadToken();
      await page.goto(pageUrl(own.tenantId, 'service-accounts'));
      await press(page, 'Advance epoch of nightly sync');
      await press(page, 'Confirm');
      expect((await getMe(old)).body.error).toBe('epoch_changed');
      await context.close();
    });
  });

  describe('revoking the tenant admin key', () => {
    it('ends a console session signed in with it', async () => {
      const context = await browser.newContext();
      const key = await operator.ok('POST', `/tenants/${own.tenantId}/admin-keys`);
      const { page } = await signIn(context, key.key);
      expect(page.url()).toBe(pageUrl(own.tenantId, 'apps'));
      await operator.ok('DELETE', `/tenants/${own.tenantId}/admin-keys/${key.keyId}`);
      await page.goto(pageUrl(own.tenantId, 'apps'));
      expect(new URL(page.url()).pathname).toBe('/admin/console/sign-in');
      await expect(page.getByRole('status').innerText()).resolves.toMatch(/admin key you signed in with was revoked/);
      await context.close();
    });
  });

  describe('console sessions', () => {
    it(
      `end after ${IDLE_MS / 60000} minutes unused and ` +
        `${MAX_AGE_MS / 3600000} hours after sign-in, whatever the use`,
      async () => {
        let now = Date.now();
        const store = new SessionStore(system.db.knex, () => now);
        const idle = await store.create({ kind: 'operator' });
        const busy = await store.create({ kind: 'operator' });
        const signedInAt = now;
        for (now += IDLE_MS / 2; now < signedInAt + MAX_AGE_MS; now += IDLE_MS / 2)
          expect(await store.get(busy.id, false)).toEqual(busy);
        expect(await store.get(idle.id, false)).toBeUndefined();
        now = signedInAt + MAX_AGE_MS;
        expect(await store.get(busy.id, false)).toBeUndefined();
      },
    );

    it.each([
      ['over plain HTTP', {}, false],
      ['behind a TLS-terminating proxy (x-forwarded-proto: https)', { 'x-forwarded-proto': 'https' }, true],
    ])('get a Secure cookie only when the browser uses HTTPS: %s', async (_name, headers, secure) => {
      const res = await fetch(`${consoleUrl}/sign-in`, { headers });
      const cookie = res.headers.get('set-cookie') ?? '';
      const attributes = cookie.split('; ').slice(1).sort();
      expect(cookie).toMatch(/^console_sign_in=[\w-]{32}\.[\w-]{43};/);
      expect(attributes).toEqual(['HttpOnly', 'Path=/admin/console', 'SameSite=Strict', ...(secure ? ['Secure'] : [])]);
    });

    it('are stored only at sign-in: anonymous visits of the sign-in page store nothing and evict no one', async () => {
      const context = await browser.newContext();
      try {
        const { page } = await signIn(context, system.adminToken);
        const stored = async () => Number((await system.db.knex('console_sessions').count({ n: '*' }).first())!.n);
        const before = await stored();
        for (let i = 0; i < 50; i++) expect((await fetch(`${consoleUrl}/sign-in`)).status).toBe(200);
        expect(await stored()).toBe(before);
        await page.goto(`${consoleUrl}/tenants`);
        expect(page.url()).toBe(`${consoleUrl}/tenants`);
      } finally {
        await context.close();
      }
    });

    it(
      'refuse a sign-in whose form token is not the one its cookie ' +
        'vouches for, or whose cookie this console did not sign',
      async () => {
        const res = await fetch(`${consoleUrl}/sign-in`);
        const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
        const token = /name="_csrf" value="([^"]+)"/.exec(await res.text())![1]!;
        const post = (cookieHeader: string, csrf: string) =>
          fetch(`${consoleUrl}/sign-in`, {
            method: 'POST',
            redirect: 'manual',
            headers: { cookie: cookieHeader },
            body: new URLSearchParams({ _csrf: csrf, key: system.adminToken }),
          }).then((r) => r.status);
        expect(await post(cookie, `${token}x`)).toBe(403);
        expect(await post(`console_sign_in=${token}.${'A'.repeat(43)}`, token)).toBe(403);
        expect(await post('', token)).toBe(403);
        expect(await post(cookie, token)).toBe(303);
      },
    );

    it(
      'are known to every admin replica sharing the database (the manifests run two), ' + 'and to a restarted one',
      async () => {
        const replica = await startPolicies({
          config: { ...system.config, PDP_PORT: 0 },
          log: createLogger('policies', 'silent'),
          knex: system.db.knex,
          telemetry: createTelemetry(),
          adminToken: system.adminToken,
          internalSecret: 'replica-internal-secret-0123456789',
        });
        const context = await browser.newContext();
        try {
          const { page } = await signIn(context, system.adminToken);
          expect(page.url()).toBe(`${consoleUrl}/tenants`);
          // Same host, so the browser sends the session cookie to the other replica too (cookies are not kept per port).
          const onReplica = `${replica.url}/admin/console/tenants/${own.tenantId}/apps`;
          await page.goto(onReplica);
          expect(page.url()).toBe(onReplica);
          await expect(row(page, own.clientId).count()).resolves.toBe(1);
        } finally {
          await context.close();
          await replica.close();
        }
      },
    );
  });
});
