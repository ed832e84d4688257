// The tenant admin's everyday jobs in the admin console (docs/admin-console.md), each done in real Chromium as the
// admin would and each checked for its effect through the gateway, the token endpoint, the admin API or the CLI:
// creating a service account and using it, finding and managing a person named as the admin knows them, an app that
// owns records (Disable, not Delete), limits and plans shown before they refuse, denials in words, verifying the audit
// trail, exporting, and the pages a person and a signed-out admin read.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { main as adminCli } from '../../infra/admin-cli.js';
import { downloadedText, launchBrowser } from '../support/browser.js';
import { consoleOf, press, row, shot, signIn } from '../support/console.js';
import { startTestSystem } from '../support/system.js';
import {
  adminClient,
  setupMachineClient,
  setupTenant,
  type AdminClient,
  type MachineClientSetup,
} from '../support/admin.js';
import { callApi } from '../support/api.js';
import { assertResponseMatches } from '../support/openapi.js';
import { PERSON_SCOPES, personApi, registerExtension } from '../support/extensions.js';
import {
  authorizationRequest,
  basicAuth,
  clientCredentialsToken,
  discover,
  obtainTokens,
  postTokenForm,
  signInAndConsent,
} from '../support/oauth.js';
import { CAPABILITIES } from '../../wire/decision.js';

describe('admin-console-jobs', () => {
  const run = promisify(execFile);

  /** Every capability of the catalogue. */
  const ALL = [...CAPABILITIES];

  let system: System;
  let operator: AdminClient;
  let browser: Browser;
  let consoleUrl: string;

  beforeAll(async () => {
    [system, browser] = await Promise.all([
      startTestSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' }),
      launchBrowser(),
    ]);
    operator = adminClient(system);
    consoleUrl = consoleOf(system.pdpUrl);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const pageUrl = (tenantId: string, path: string) => `${consoleUrl}/tenants/${tenantId}/${path}`;
  const main = (page: Page) => page.getByRole('main').innerText();
  const getMe = (token: string) => callApi(system.baseUrl, 'getMe', '/me', token);
  const getTenant = (token: string) => callApi(system.baseUrl, 'getTenant', '/tenant', token);

  /** A client_credentials token of the machine client `app`. */
  const workloadToken = (app: MachineClientSetup, scope = ALL.join(' ')) =>
    clientCredentialsToken(system.authUrl, { clientId: app.clientId, clientSecret: app.clientSecret }, scope);

  /** Stores a record about the app's person through the gateway, as the app does; returns the app's token. */
  async function storeRecord(app: MachineClientSetup, extensionId: string, note: string): Promise<string> {
    const token = await workloadToken(app);
    const stored = await personApi(system.baseUrl).put(
      token,
      app.personId,
      extensionId,
      { schemaVersion: 1, data: { note } },
      { 'if-none-match': '*' },
    );
    expect(stored.status).toBe(201);
    return token;
  }

  /** A browser context signed in to the console (of this suite's system, unless `at`) with `key`, on its first page. */
  async function signedIn(key: string, at = consoleUrl): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ acceptDownloads: true });
    const { page } = await signIn(context, at, key);
    return { context, page };
  }

  const tenantKey = async (tenantId: string): Promise<string> =>
    (await operator.ok('POST', `/tenants/${tenantId}/admin-keys`)).key;

  /** Everything the CLI writes to stdout for `args` run with `token`, and its exit code. */
  async function cli(args: string[], token: string): Promise<{ code: number; out: string }> {
    const chunks: string[] = [];
    const stdout = new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) });
    const env = { ADMIN_URL: `${system.pdpUrl}/admin/v1`, ADMIN_TOKEN: token };
    const code = await adminCli(args, env, { out: (t) => chunks.push(`${t}\n`), err: () => {}, stdout });
    return { code, out: chunks.join('') };
  }

  describe('a service account, created in the console', () => {
    it(
      'starts from an empty state that says what it is for, is created for an app with capabilities from its ' +
        'grant (described, marked when the plan excludes them, none ticked unasked), and shows its id and the ' +
        'token request that then works as shown',
      async () => {
        const tenant = await setupTenant(operator, {
          type: 'confidential',
          plan: 'L1',
          capabilities: ['svc.profile.self.read', 'svc.tenant.info.read', 'svc.person.read'],
        });
        const { context, page } = await signedIn(await tenantKey(tenant.tenantId));
        try {
          await page.goto(pageUrl(tenant.tenantId, 'service-accounts'));
          expect(await main(page)).toContain('No service accounts yet.');
          expect(await main(page)).toMatch(/how an app acts as itself rather than for a person/);
          await page.getByLabel('App', { exact: true }).selectOption(tenant.clientId);
          await press(page, 'Next: name and capabilities');
          expect(await page.locator('#grant-off').count()).toBe(0);
          // Offered: exactly the app's grant, none ticked, each with its description and what the plan means for it.
          const offered = page.getByRole('group', { name: /Capabilities its tokens may use/ }).getByRole('checkbox');
          await expect(offered.count()).resolves.toBe(3);
          for (const box of await offered.all()) await expect(box.isChecked()).resolves.toBe(false);
          expect(await page.locator('#sa-cap-svc\\.tenant\\.info\\.read-d').innerText()).toBe(
            "Read the tenant's public identity",
          );
          expect(await page.locator('#sa-cap-svc\\.person\\.read-d').innerText()).toMatch(
            /needs plan L2: refused until the tenant's plan includes it\.$/,
          );
          await page.getByLabel('svc.tenant.info.read').check();
          await page.getByLabel(/^Name/).fill('nightly sync');
          expect((await press(page, 'Create service account')).status()).toBe(201);
          const accountId = await page.locator('#new-account').innerText();
          expect(accountId).toMatch(/^acc_/);
          const curl = await page.locator('#token-request').innerText();
          expect(curl).toBe(
            `curl -u '${tenant.clientId}:<client secret>' -d grant_type=client_credentials ` +
              `-d 'scope=svc.tenant.info.read' ${system.authUrl}/oauth2/token`,
          );
          await shot(page, 'jobs-service-account-created');
          // The next step, run as shown with the app's secret in its place, works: the token acts as the new account.
          const { stdout } = await run('sh', ['-c', curl.replace('<client secret>', tenant.clientSecret!)]);
          const answer = JSON.parse(stdout) as { access_token: string; scope: string };
          expect(answer.scope).toBe('svc.tenant.info.read');
          expect(decodeJwt(answer.access_token).sub).toBe(accountId);
          expect((await getTenant(answer.access_token)).status).toBe(200);
          await page.goto(pageUrl(tenant.tenantId, 'service-accounts'));
          await expect(row(page, accountId).getByRole('cell').nth(2).innerText()).resolves.toBe('svc.tenant.info.read');
          // Its app has its one service account now: the form offers no app, and says why.
          expect(await main(page)).toMatch(/has its service account already/);
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('a service account where the issuer does not offer client_credentials (the draft default)', () => {
    let plain: System;
    beforeAll(async () => {
      plain = await startTestSystem();
    });
    afterAll(async () => plain?.close());

    it('says so in words, with what the operator sets to turn it on, instead of a token request that would be refused', async () => {
      const admin = adminClient(plain);
      const tenant = await setupTenant(admin, { type: 'confidential', capabilities: ['svc.tenant.info.read'] });
      // What the page would otherwise offer is refused on this deployment.
      const refused = await postTokenForm(
        plain.authUrl,
        { grant_type: 'client_credentials', scope: 'svc.tenant.info.read' },
        { authorization: basicAuth(tenant.clientId, tenant.clientSecret!) },
      );
      expect(refused.body.error).toBe('unsupported_grant_type');
      const key = (await admin.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`)).key;
      const { context, page } = await signedIn(key, consoleOf(plain.pdpUrl));
      const off =
        "This deployment's token endpoint does not offer the client_credentials grant yet (it is off by default " +
        'while the contract is a draft), so a service account cannot get a token: the request is refused. The ' +
        'operator turns it on by setting ISSUER_ENABLE_CLIENT_CREDENTIALS=true for the issuer and restarting it.';
      try {
        await page.goto(`${consoleOf(plain.pdpUrl)}/tenants/${tenant.tenantId}/service-accounts`);
        expect(await page.locator('#grant-off').innerText()).toBe(off);
        await page.getByLabel('App', { exact: true }).selectOption(tenant.clientId);
        await press(page, 'Next: name and capabilities');
        await page.getByLabel('svc.tenant.info.read').check();
        await page.getByLabel(/^Name/).fill('nightly sync');
        expect((await press(page, 'Create service account')).status()).toBe(201);
        await expect(page.locator('#new-account').innerText()).resolves.toMatch(/^acc_/);
        expect(await page.locator('#grant-off').innerText()).toBe(off);
        await expect(page.locator('#token-request').count()).resolves.toBe(0);
        await shot(page, 'jobs-service-account-grant-off');
      } finally {
        await context.close();
      }
    });
  });

  describe('a person, named as the admin knows them', () => {
    it(
      'is found by name, shows login, relationship, consents and sessions, and every question and notice names ' +
        'them by name and username; the list keeps its search after an action',
      async () => {
        const tenant = await setupTenant(operator, { capabilities: ['svc.profile.self.read', 'svc.tenant.info.read'] });
        const person = { username: `ada-${Date.now().toString(36)}`, password: 'correct horse battery' };
        const created = await operator.ok('POST', `/tenants/${tenant.tenantId}/persons`, {
          displayName: 'Ada Lovelace',
          ...person,
        });
        const named = `Ada Lovelace (${person.username})`;
        // The person lets the app in; the consent page leads each capability with its description.
        const app = { authUrl: system.authUrl, clientId: tenant.clientId, redirectUri: tenant.redirectUri };
        const config = await discover(app);
        const request = await authorizationRequest(config, app.redirectUri, 'svc.profile.self.read');
        let consentItems: string[] = [];
        const callback = await signInAndConsent(browser, request.url, person, 'Allow', async (consent) => {
          consentItems = await consent.getByRole('listitem').allInnerTexts();
          await shot(consent, 'jobs-consent');
        });
        expect(consentItems).toEqual([
          expect.stringMatching(
            /^That it is you: .+ \(not your name, username, email or password\)\s+Read the identity behind this token · svc\.profile\.self\.read$/,
          ),
        ]);
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: request.verifier,
          expectedState: request.state,
        });
        expect((await getMe(tokens.access_token)).status).toBe(200);

        const { context, page } = await signedIn(await tenantKey(tenant.tenantId));
        try {
          await page.goto(pageUrl(tenant.tenantId, 'persons'));
          await page.getByLabel('Find by username or name').fill('ada lov');
          await press(page, 'Find');
          await press(page, 'Ada Lovelace', 'link');
          const facts = await page.locator('dl').innerText();
          for (const fact of ['Ada Lovelace', person.username, 'active', created.personId])
            expect(facts).toContain(fact);
          await expect(row(page, tenant.clientId).getByRole('cell').last().innerText()).resolves.toBe('active');
          await shot(page, 'jobs-person');

          await press(page, 'End every session');
          const question = await page.getByRole('alert').innerText();
          expect(question).toContain(`End every session of ${named}?`);
          expect(question).not.toMatch(/acc_|psn_/);
          await press(page, 'Confirm');
          await expect(page.getByRole('status').innerText()).resolves.toBe(`Every session of ${named} is ended.`);
          expect((await getMe(tokens.access_token)).body.error).toBe('subject_revoked');

          // From the list, found by a search: the question names the person, and the list comes back as it was.
          await page.goto(`${pageUrl(tenant.tenantId, 'persons')}?q=ada`);
          await press(page, 'Disable login of Ada Lovelace');
          expect(await page.getByRole('alert').innerText()).toMatch(/^Disable the login of Ada Lovelace \(ada-\w+\)\?/);
          await press(page, 'Confirm');
          expect(new URL(page.url()).searchParams.get('q')).toBe('ada');
          await expect(page.getByLabel('Find by username or name').inputValue()).resolves.toBe('ada');
          await expect(page.getByRole('status').innerText()).resolves.toBe(`${named} can no longer sign in.`);
          await expect(row(page, person.username).getByRole('cell').nth(2).innerText()).resolves.toBe('disabled');
          await press(page, 'Enable login of Ada Lovelace');
          expect(new URL(page.url()).searchParams.get('q')).toBe('ada');
          await expect(page.getByRole('status').innerText()).resolves.toBe(`${named} can sign in again.`);

          await press(page, 'Ada Lovelace', 'link');
          await press(page, 'End the relationship');
          expect(await page.getByRole('alert').innerText()).toContain(`relationship with ${named}?`);
          await press(page, 'Confirm');
          await expect(page.getByRole('status').innerText()).resolves.toBe(`The relationship with ${named} is ended.`);
          expect(await page.locator('dl').innerText()).toMatch(/Relationship with this tenant\s+ended/);
          const listed = await operator.ok('GET', `/tenants/${tenant.tenantId}/persons?relationship=ended`);
          expect(listed.items.map((p: { personId: string }) => p.personId)).toEqual([created.personId]);
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('an app that owns records', () => {
    it(
      'shows its record count up front and offers Disable instead of Delete; a Delete the records now refuse is ' +
        'never asked about, and a refused Confirm answers the same, naming the app and counting in words',
      async () => {
        const own = await setupMachineClient(operator, { grant: ALL });
        const extensionId = await registerExtension(operator, own.clientId);
        const { context, page } = await signedIn(await tenantKey(own.tenantId));
        const app = await operator.ok('GET', `/clients/${own.clientId}`);
        const notDeleted = `${app.name} was not deleted: it owns 1 stored record about persons now.`;
        try {
          // Seen with no records: Delete is offered, and asked about by the app's name with its client id after it.
          await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
          expect(await page.locator('dl').innerText()).toMatch(/Stored records about persons\s+0/);
          await press(page, 'Delete app');
          const question = await page.getByRole('alert').innerText();
          expect(question).toBe(
            `Delete ${app.name} ${own.clientId}? Its tokens are refused from their next request, and its secrets, ` +
              'grant, consents and service account are gone for good.',
          );
          await expect(page.getByRole('alert').locator('small code').innerText()).resolves.toBe(own.clientId);
          // A record is stored before Confirm: the Delete is refused with the app's page, its count and Disable.
          const token = await storeRecord(own, extensionId, 'kept');
          expect((await press(page, 'Confirm')).status()).toBe(409);
          await expect(page.getByRole('alert').innerText()).resolves.toBe(notDeleted);
          await expect(page.getByRole('button', { name: 'Disable app' }).count()).resolves.toBe(1);
          await expect(page.getByRole('button', { name: 'Delete app' }).count()).resolves.toBe(0);

          // A Delete posted from a page shown before the first record arrived is not asked about either.
          const other = await setupMachineClient(operator, { grant: ALL });
          const otherExtension = await registerExtension(operator, other.clientId);
          const otherApp = await operator.ok('GET', `/clients/${other.clientId}`);
          const asOther = await signedIn(await tenantKey(other.tenantId));
          try {
            await asOther.page.goto(pageUrl(other.tenantId, `apps/${other.clientId}`));
            await storeRecord(other, otherExtension, 'arrived');
            expect((await press(asOther.page, 'Delete app')).status()).toBe(409);
            expect(await asOther.page.getByRole('main').innerText()).not.toContain('Are you sure');
            await expect(asOther.page.getByRole('alert').innerText()).resolves.toBe(
              `${otherApp.name} was not deleted: it owns 1 stored record about persons now.`,
            );
            await shot(asOther.page, 'jobs-delete-refused-before-asking');
          } finally {
            await asOther.context.close();
          }

          // Shown again, the page says so before anything, and offers Disable only.
          await page.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
          expect(await page.locator('dl').innerText()).toMatch(/Stored records about persons\s+1/);
          expect(await page.locator('#kept-records').innerText()).toMatch(
            /owns 1 stored record about\s+persons.*Disable it/s,
          );
          await expect(page.getByRole('button', { name: 'Delete app' }).count()).resolves.toBe(0);
          await shot(page, 'jobs-app-with-records');
          await press(page, 'Disable app');
          expect(await page.getByRole('alert').innerText()).toBe(
            `Disable ${app.name} ${own.clientId}? Its tokens are refused from their next request, and it gets no new ` +
              'ones until it is enabled again.',
          );
          await press(page, 'Confirm');
          await expect(page.getByRole('status').innerText()).resolves.toBe(`${app.name} is now disabled.`);
          expect((await getMe(token)).body.error).toBe('client_disabled');
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('limits and plans', () => {
    it(
      "show the plan's ceiling beside each limit and mark what the plan excludes before it is ticked; " +
        'refusals are sentences about the field, never a JSON path',
      async () => {
        const l1 = await setupTenant(operator, { plan: 'L1' });
        const { context, page } = await signedIn(await tenantKey(l1.tenantId));
        try {
          await page.goto(pageUrl(l1.tenantId, 'settings'));
          const points = page.getByLabel('Each account: requests');
          await expect(points.getAttribute('max')).resolves.toBe('600');
          expect(await page.locator('#accountPoints-ceiling').innerText()).toBe('plan L1 ceiling: 600 requests');
          expect(await page.locator('#tenantPoints-ceiling').innerText()).toBe('plan L1 ceiling: 3000 requests');
          await shot(page, 'jobs-settings-ceilings');
          // What the browser's own check would stop, sent anyway: the server's words are what is tested.
          const send = async (value: string) => {
            await points.fill(value);
            await page
              .locator('form:has(button:text-is("Save settings"))')
              .evaluate((form: HTMLFormElement) => void (form.noValidate = true));
            return press(page, 'Save settings');
          };
          expect((await send('601')).status()).toBe(403);
          const beyond = await page.getByRole('alert').innerText();
          expect(beyond).toBe(
            "Each account's limit is beyond the plan's ceiling of 600 per 60 s. Ask the operator for more.",
          );
          expect((await send('0')).status()).toBe(422);
          expect(await page.getByRole('alert').innerText()).toBe("Each account's requests must be at least 1.");

          await page.goto(pageUrl(l1.tenantId, `apps/${l1.clientId}`));
          expect(await page.locator('#cap-svc\\.person\\.read-d').innerText()).toMatch(/needs plan L2: refused/);
          expect(await page.locator('#cap-svc\\.tenant\\.info\\.read-d').innerText()).not.toContain('needs plan');
          expect(await page.locator('#cap-svc\\.person\\.metadata\\.write-d').innerText()).toMatch(
            /needs plan L2 to store new records/,
          );
          // Granting them anyway is saved, and the notice says in words what the plan will refuse.
          await page.getByLabel('svc.person.read').check();
          await page.getByLabel('svc.person.metadata.write').check();
          await press(page, 'Save granted capabilities');
          const saved = await page.getByRole('status').innerText();
          expect(saved).toMatch(new RegExp(`^Granted capabilities saved for ${l1.clientName}: `));
          expect(saved).toContain(
            `The tenant's plan does not include svc.person.read (needs plan L2): ${l1.clientName}'s calls that need ` +
              'it will be refused until the plan does.',
          );
          expect(saved).toContain(
            `Until the plan includes svc.person.metadata.write (needs plan L2), ${l1.clientName} can read and delete ` +
              'the records it stored but not store new ones.',
          );
          expect(saved).not.toContain('plan_capability_excluded');
          await shot(page, 'jobs-grant-beyond-plan');
          const grant = await operator.ok('GET', `/tenants/${l1.tenantId}/grants/${l1.clientId}`);
          expect([...grant.capabilities].sort()).toEqual([
            'svc.person.metadata.write',
            'svc.person.read',
            'svc.profile.self.read',
            'svc.tenant.info.read',
          ]);

          await page.goto(pageUrl(l1.tenantId, 'persons'));
          await page.getByLabel('Display name').fill('Short');
          await page.getByLabel('Username (unique in this tenant)').fill('ab');
          await page.getByLabel('Password (at least 8 characters)').fill('correct horse battery');
          await page
            .locator('form:has(button:text-is("Create person"))')
            .evaluate((form: HTMLFormElement) => void (form.noValidate = true));
          expect((await press(page, 'Create person')).status()).toBe(422);
          expect(await page.getByRole('alert').innerText()).toBe('The username needs at least 3 characters.');
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('words, not enums', () => {
    it(
      "an empty table says what would be there and how to add it; a bad tenant label gets the server's sentence; " +
        'apps read "Third-party, confidential"; usage and extensions name apps; rotation says when the old secret ends',
      async () => {
        const asOperator = await signedIn(system.adminToken);
        const { page } = asOperator;
        try {
          await page.goto(`${consoleUrl}/tenants`);
          await page.getByLabel('Display name').fill('Words Ltd');
          await page.getByLabel(/^Label/).fill('Words Ltd');
          expect((await press(page, 'Create tenant')).status()).toBe(422);
          await expect(page.getByRole('alert').innerText()).resolves.toBe(
            'The label may hold only lower-case letters, digits and single dashes.',
          );
          await expect(page.getByLabel(/^Label/).inputValue()).resolves.toBe('Words Ltd');
          await page.getByLabel(/^Label/).fill(`words-${Date.now().toString(36)}`);
          await press(page, 'Create tenant');
          const tenantId = new URL(page.url()).pathname.split('/')[4]!;
          for (const [path, id, text] of [
            ['apps', '#no-apps', /^No apps yet: .* Register an app below\.$/],
            ['extensions', '#no-extensions', /^No extensions yet: .* Register an extension below\.$/],
            ['usage', '#no-usage', /^No metered calls in the last 30 days: .* calls the API with a token\.$/],
            [
              'service-accounts',
              '#no-service-accounts',
              /^No service accounts yet\. .* Create a service account below\.$/,
            ],
          ] as const) {
            await page.goto(pageUrl(tenantId, path));
            expect(await page.locator(id).innerText()).toMatch(text);
            await expect(page.getByRole('table').count()).resolves.toBe(0);
          }
          await shot(page, 'jobs-empty-apps');
        } finally {
          await asOperator.context.close();
        }

        const own = await setupMachineClient(operator, { grant: ALL });
        const extensionId = await registerExtension(operator, own.clientId);
        await storeRecord(own, extensionId, 'metered');
        const { context, page: admin } = await signedIn(await tenantKey(own.tenantId));
        try {
          await admin.goto(pageUrl(own.tenantId, 'apps'));
          const listed = row(admin, own.clientName).getByRole('cell');
          await expect(listed.nth(1).innerText()).resolves.toBe('Third-party');
          await expect(listed.nth(2).innerText()).resolves.toBe('confidential');
          await admin.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
          expect(await admin.locator('dl').innerText()).toMatch(/Kind and type\s+Third-party, confidential/);
          await admin.goto(pageUrl(own.tenantId, 'extensions'));
          await expect(row(admin, extensionId).getByRole('cell').nth(1).innerText()).resolves.toBe(
            `${own.clientName} ${own.clientId}`,
          );
          await admin.goto(pageUrl(own.tenantId, 'usage'));
          for (let attempt = 0; attempt < 40 && (await row(admin, own.clientName).count()) === 0; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 250));
            await admin.reload();
          }
          await expect(row(admin, own.clientName).getByRole('cell').first().innerText()).resolves.toBe(
            `${own.clientName} ${own.clientId}`,
          );
          await shot(admin, 'jobs-usage-by-name');

          await admin.goto(pageUrl(own.tenantId, `apps/${own.clientId}`));
          const before = Date.now();
          expect((await press(admin, 'Create a next secret')).status()).toBe(201);
          const day = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' });
          const ends = await admin.locator('#old-secret-ends').innerText();
          expect(ends).toMatch(/^\d{1,2} \w+ \d{4} at \d{2}:\d{2} UTC$/);
          expect(ends.startsWith(day.format(before + 7 * 24 * 3600 * 1000))).toBe(true);
          await shot(admin, 'jobs-next-secret');
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('denials', () => {
    it('read as one sentence each, with a link to where they are fixed; the filter offers the same words', async () => {
      const own = await setupMachineClient(operator, { grant: ALL });
      await operator.ok('PUT', `/tenants/${own.tenantId}/grants/${own.clientId}`, {
        capabilities: ALL.filter((c) => c !== 'svc.tenant.info.read'),
      });
      const token = await workloadToken(own, 'svc.profile.self.read');
      // A token from before the withdrawal would say so too; this one was never granted the capability.
      const denied = await callApi(system.baseUrl, 'getTenant', '/tenant', token);
      expect(denied.status).toBe(403);
      const { context, page } = await signedIn(await tenantKey(own.tenantId));
      try {
        await page.goto(pageUrl(own.tenantId, 'decisions'));
        const sentence = 'The tenant does not grant the app this capability.';
        await page.getByLabel('Why denied').selectOption({ label: sentence });
        for (let attempt = 0; attempt < 40; attempt++) {
          await press(page, 'Search');
          if ((await row(page, own.clientName).count()) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        const denial = row(page, own.clientName).first();
        const why = await denial.getByRole('cell').nth(5).innerText();
        expect(why).toBe(`${sentence} Fix it: the app's grant capability_not_granted`);
        expect(why).not.toMatch(/capability\.tenant_grant/);
        await shot(page, 'jobs-denials');
        await Promise.all([page.waitForNavigation(), denial.getByRole('link', { name: /Fix it/ }).click()]);
        expect(page.url()).toBe(`${pageUrl(own.tenantId, `apps/${own.clientId}`)}#grant-h`);
        await page.getByLabel('svc.tenant.info.read').check();
        await press(page, 'Save granted capabilities');
        const again = await workloadToken(own, 'svc.tenant.info.read');
        expect((await getTenant(again)).status).toBe(200);
      } finally {
        await context.close();
      }
    });
  });

  describe('the audit trail', () => {
    it(
      "is verified from the console: the operator's whole chain, a tenant admin's own entries, intact or the " +
        'first that fails, and verify-audit with the tenant key answers the same',
      async () => {
        const tenant = await setupTenant(operator);
        const key = await tenantKey(tenant.tenantId);
        const asOperator = await signedIn(system.adminToken);
        const asTenant = await signedIn(key);
        const verify = async (page: Page) => {
          await page.goto(pageUrl(tenant.tenantId, 'audit'));
          await press(page, 'Verify');
          return page.locator('#verification').innerText();
        };
        try {
          expect(await verify(asOperator.page)).toMatch(/^The whole audit trail is intact \(\d+ entries checked\)\.$/);
          const own = await operator.ok('GET', `/tenants/${tenant.tenantId}/audit?limit=100`);
          const entries = own.items.length;
          expect(await verify(asTenant.page)).toBe(
            `This tenant's audit entries are intact (${entries} entries checked).`,
          );
          await shot(asTenant.page, 'jobs-audit-verified');
          expect(JSON.parse((await cli(['verify-audit', '--tenant', tenant.tenantId], key)).out)).toEqual({
            ok: true,
            entries,
          });

          // An entry of this tenant edited in the database: both checks name it; the CLI with the key says the same.
          const edited = own.items.at(-2)!.id as string;
          const before = await system.db.knex('admin_audit').where({ id: edited }).first('ip');
          await system.db.knex('admin_audit').where({ id: edited }).update({ ip: '203.0.113.9' });
          try {
            const failed = await verify(asTenant.page);
            expect(failed).toMatch(new RegExp(`^This tenant's audit entries fail at entry ${edited}:`));
            expect(await verify(asOperator.page)).toMatch(
              new RegExp(`^The whole audit trail fails at entry ${edited}:`),
            );
            const answer = await cli(['verify-audit', '--tenant', tenant.tenantId], key);
            expect(answer.code).toBe(0);
            expect(JSON.parse(answer.out)).toEqual({ ok: false, entries: 2, brokenAt: edited });
            // Without --tenant, the key is told to name its tenant (exit 2, nothing sent).
            expect((await cli(['verify-audit'], key)).code).toBe(2);
          } finally {
            await system.db.knex('admin_audit').where({ id: edited }).update(before);
          }
          expect(await verify(asTenant.page)).toMatch(/are intact/);
        } finally {
          await asOperator.context.close();
          await asTenant.context.close();
        }
      },
    );
  });

  describe('export', () => {
    it(
      'says how many records there are before any download, offers none when there are none, and downloads the ' +
        'whole tenant as typed lines, the same file as the admin API and the CLI',
      async () => {
        const empty = await setupTenant(operator);
        const full = await setupMachineClient(operator, { grant: ALL });
        const extensionId = await registerExtension(operator, full.clientId);
        await storeRecord(full, extensionId, 'exported');

        const emptyConsole = await signedIn(await tenantKey(empty.tenantId));
        try {
          await emptyConsole.page.goto(pageUrl(empty.tenantId, 'export'));
          expect(await emptyConsole.page.locator('#record-count').innerText()).toMatch(/stored no records/);
          await expect(emptyConsole.page.getByRole('button', { name: 'Download records' }).count()).resolves.toBe(0);
        } finally {
          await emptyConsole.context.close();
        }

        const key = await tenantKey(full.tenantId);
        const { context, page } = await signedIn(key);
        try {
          await page.goto(pageUrl(full.tenantId, 'export'));
          expect(await page.locator('#record-count').innerText()).toMatch(/stored 1 record about persons/);
          await shot(page, 'jobs-export');
          const [download] = await Promise.all([
            page.waitForEvent('download'),
            page.getByRole('button', { name: 'Download the whole tenant' }).click(),
          ]);
          expect(download.suggestedFilename()).toMatch(/-tenant\.ndjson$/);
          const file = await downloadedText(download);
          const lines = file
            .trimEnd()
            .split('\n')
            .map((l) => JSON.parse(l));
          expect(lines.every((l) => typeof l.type === 'string')).toBe(true);
          expect([...new Set(lines.map((l) => l.type))]).toEqual([
            'tenant',
            'person',
            'app',
            'grant',
            'service_account',
            'extension',
            'record',
            'audit_entry',
          ]);
          expect(lines[0]).toMatchObject({ type: 'tenant', tenantId: full.tenantId });
          expect(lines.find((l) => l.type === 'person')).toMatchObject({
            personId: full.personId,
            username: full.username,
            relationship: { status: 'active' },
          });
          expect(lines.find((l) => l.type === 'extension')).toMatchObject({
            extensionId,
            schemaVersions: [{ version: 1, schema: expect.any(Object) }],
          });
          expect(lines.find((l) => l.type === 'record')).toMatchObject({ data: { note: 'exported' } });
          // No secret, hash or password anywhere but the audit trail's own chain (where secrets show as redacted).
          const objects = JSON.stringify(lines.filter((l) => l.type !== 'audit_entry'));
          expect(objects).not.toMatch(/secret|password|hash|"key"/i);
          expect(file).not.toContain(full.clientSecret);
          expect(file).not.toContain(full.password);

          // The admin API (each line held to admin-api.yaml) and the CLI give the same file.
          const res = await fetch(`${system.pdpUrl}/admin/v1/tenants/${full.tenantId}/export/tenant`, {
            headers: { authorization: `Bearer ${key}` },
          });
          const body = await res.text();
          assertResponseMatches('admin', 'exportTenant', { status: res.status, headers: res.headers, body });
          expect(body).toBe(file);
          const viaCli = await cli(['export-tenant', '--tenant', full.tenantId], key);
          expect(viaCli.code).toBe(0);
          expect(viaCli.out).toBe(file);
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('a revoked tenant admin key', () => {
    it('lands on Sign in with a sentence saying why', async () => {
      const tenant = await setupTenant(operator);
      const issued = await operator.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`);
      const { context, page } = await signedIn(issued.key);
      try {
        expect(page.url()).toBe(pageUrl(tenant.tenantId, 'apps'));
        await operator.ok('DELETE', `/tenants/${tenant.tenantId}/admin-keys/${issued.keyId}`);
        await page.reload();
        expect(new URL(page.url()).pathname).toBe('/admin/console/sign-in');
        await expect(page.getByRole('status').innerText()).resolves.toBe(
          'Your session ended because the admin key you signed in with was revoked. Sign in with a current key; ' +
            'the operator issues new ones.',
        );
        await shot(page, 'jobs-key-revoked');
      } finally {
        await context.close();
      }
    });
  });

  describe('person search', () => {
    it('finds a part of a name or username anywhere in it, in any case: "bui" finds Bob Builder', async () => {
      const tenant = await setupTenant(operator);
      const username = `bob-${Date.now().toString(36)}`;
      const make = (displayName: string, name: string) =>
        operator.ok('POST', `/tenants/${tenant.tenantId}/persons`, {
          displayName,
          username: name,
          password: 'correct horse battery',
        });
      await make('Bob Builder', username);
      await make('Wendy Crane', 'wendy');
      const { context, page } = await signedIn(await tenantKey(tenant.tenantId));
      const found = async (part: string) => {
        await page.getByLabel('Find by username or name').fill(part);
        await press(page, 'Find');
        return page.locator('tbody').getByRole('link').allInnerTexts();
      };
      try {
        await page.goto(pageUrl(tenant.tenantId, 'persons'));
        expect(await found('bui')).toEqual(['Bob Builder']);
        await shot(page, 'jobs-person-search');
        expect(await found('OB-')).toEqual(['Bob Builder']); // inside the username, upper case
        expect(await found('ne')).toEqual(['Wendy Crane']); // inside both of Wendy's, in neither of Bob's
        expect(await found('zzz')).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });

  describe('decisions, read as the admin knows the tenant', () => {
    it(
      'name the app and the subject, say the check in words, show a request the API refused after an allow with its ' +
        "status, explain another tenant's person without a fix link, use the table's words in the filter, and fit " +
        'a 1,280 px window',
      async () => {
        const own = await setupMachineClient(operator, { grant: ALL });
        const other = await setupTenant(operator);
        const extensionId = await registerExtension(operator, own.clientId);
        const app = { authUrl: system.authUrl, ...own };
        const person = { username: own.username, password: own.password };
        const self = (await obtainTokens(browser, app, person, `svc.profile.self.read ${PERSON_SCOPES}`)).access_token;
        const requestOf = (answer: { headers: Headers }) => answer.headers.get('x-request-id')!;
        // Allowed by the PDP, then refused by the backend: a PUT without a precondition header.
        const unconditional = await personApi(system.baseUrl).put(
          self,
          own.personId,
          extensionId,
          { schemaVersion: 1, data: { note: 'x' } },
          {},
        );
        expect(unconditional.status).toBe(428);
        const mine = await getMe(self);
        expect(mine.status).toBe(200);
        const foreign = await personApi(system.baseUrl).getPerson(self, other.personId);
        expect(foreign.status).toBe(404); // tenant_mismatch, folded into 404 on person resources (contract §7.3)
        const asService = await getTenant(await workloadToken(own, 'svc.tenant.info.read'));
        expect(asService.status).toBe(200);

        const { context, page } = await signedIn(await tenantKey(own.tenantId));
        try {
          await page.setViewportSize({ width: 1280, height: 900 });
          const decision = (requestId: string) => row(page, requestId).getByRole('cell');
          // Calls are metered in batches off the request path: the API's answer shows once its batch is written.
          for (let attempt = 0; attempt < 40; attempt++) {
            await page.goto(pageUrl(own.tenantId, 'decisions'));
            if (/428/.test(await decision(requestOf(unconditional)).nth(4).innerText())) break;
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          const named = `${own.username.replace('user-', 'Person ')} (${own.username})`;
          const refusedCells = await decision(requestOf(unconditional)).allInnerTexts();
          expect(refusedCells.slice(1, 5)).toEqual([
            own.clientName,
            named,
            'svc.person.metadata.write',
            'allowed, then refused: 428 Precondition Required',
          ]);
          expect(refusedCells[6]).toBe('all checks passed');
          await expect(decision(requestOf(mine)).nth(4).innerText()).resolves.toBe('allowed answered 200');
          await expect(decision(requestOf(asService)).nth(2).innerText()).resolves.toBe(
            'nightly sync (service account)',
          );

          const mismatch = decision(requestOf(foreign));
          await expect(mismatch.nth(5).innerText()).resolves.toMatch(
            /^The app asked for another tenant's person; .* tenant_mismatch$/,
          );
          await expect(mismatch.nth(5).getByRole('link').count()).resolves.toBe(0);
          await expect(mismatch.nth(6).innerText()).resolves.toBe("the person asked for is this tenant's");
          expect(await page.locator('table').innerText()).not.toMatch(/\b(psn|acc)_|resource\.tenant|\bdeny\b/);
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
          await shot(page, 'jobs-decisions');

          // The filter speaks the table's words: outcomes as the Outcome column says them, apps by name.
          await expect(page.getByLabel('Outcome').locator('option').allInnerTexts()).resolves.toEqual([
            'Allowed or denied',
            'allowed',
            'denied',
          ]);
          await page.getByLabel('App', { exact: true }).selectOption({ label: own.clientName });
          await page.getByLabel('Outcome').selectOption({ label: 'denied' });
          await press(page, 'Search');
          const outcomes = await page.locator('tbody tr td:nth-of-type(5)').allInnerTexts();
          expect(outcomes).toEqual([...outcomes].fill('denied'));
          expect(outcomes.length).toBeGreaterThan(0);
        } finally {
          await context.close();
        }
      },
    );
  });

  describe('the audit trail, read as sentences', () => {
    it(
      'says each change as a sentence naming its target as the lists do, the code in small type, the changes as a ' +
        'field list with secrets only "changed", filters by an action chosen from the list and by a picked day, and ' +
        'names an admin key by the label it was made with, also once it is revoked',
      async () => {
        const tenant = await setupTenant(operator);
        const username = `bob-${Date.now().toString(36)}`;
        await operator.ok('POST', `/tenants/${tenant.tenantId}/persons`, {
          displayName: 'Bob Builder',
          username,
          password: 'correct horse battery',
        });
        const named = `Bob Builder (${username})`;
        // The operator makes the tenant admin's key in the console, with a label.
        const label = 'Site office laptop';
        const asOperator = await signedIn(system.adminToken);
        await asOperator.page.goto(pageUrl(tenant.tenantId, 'settings'));
        await asOperator.page.getByLabel(/^Label/).fill(` ${label} `);
        expect((await press(asOperator.page, 'Create an admin key')).status()).toBe(201);
        const key = await asOperator.page.getByRole('status', { name: 'New admin key' }).innerText();
        const issued = { key, keyId: key.split('.')[0]! };
        expect(await main(asOperator.page)).toContain(`A new admin key, ${label}, for`);
        await asOperator.page.goto(pageUrl(tenant.tenantId, 'settings'));
        await expect(row(asOperator.page, issued.keyId).getByRole('rowheader').innerText()).resolves.toBe(label);
        const { context, page } = await signedIn(issued.key);
        try {
          // The admin disables Bob's login from the persons list, then reads the audit page.
          await page.goto(`${pageUrl(tenant.tenantId, 'persons')}?q=bob`);
          await press(page, 'Disable login of Bob Builder');
          await press(page, 'Confirm');
          await expect(page.getByRole('status').innerText()).resolves.toBe(`${named} can no longer sign in.`);
          await page.goto(pageUrl(tenant.tenantId, 'audit'));
          const entry = (sentence: string) => row(page, sentence).getByRole('cell');
          const disabled = row(page, `Disabled the login of ${named}`);
          await expect(disabled.getByRole('rowheader').innerText()).resolves.toBe(
            `Disabled the login of ${named} account.disable`,
          );
          await expect(disabled.getByRole('rowheader').locator('small').innerText()).resolves.toBe('account.disable');
          await expect(entry(`Disabled the login of ${named}`).nth(1).innerText()).resolves.toBe(
            'status: active → disabled',
          );
          await expect(entry(`Disabled the login of ${named}`).nth(2).innerText()).resolves.toBe(
            `admin key ${label} ${issued.keyId}`,
          );
          await expect(entry(`Created the admin key ${label}`).nth(1).locator('li').allInnerTexts()).resolves.toEqual(
            expect.arrayContaining(['key: changed', `label: ${label}`]),
          );
          const added = entry(`Added the person ${named}`);
          // (in the order the database keeps the fields)
          expect((await added.nth(1).locator('li').allInnerTexts()).sort()).toEqual([
            'displayName: Bob Builder',
            'password: changed',
            `username: ${username}`,
          ]);
          await expect(added.nth(2).innerText()).resolves.toBe('the operator');
          await expect(row(page, `Registered the app ${tenant.clientName}`).count()).resolves.toBe(1);
          await expect(row(page, `Set the capabilities granted to ${tenant.clientName}`).count()).resolves.toBe(1);
          expect(await page.locator('tbody th').allInnerTexts()).not.toContainEqual(
            expect.stringMatching(/(acc|psn)_/),
          );
          await shot(page, 'jobs-audit-sentences');

          // The action filter offers the actions in words; the date filter is a date picker mapped to `since`.
          await page
            .getByLabel('Action')
            .selectOption({ label: 'Login or service account disabled (account.disable)' });
          await press(page, 'Filter');
          await expect(page.locator('tbody th small').allInnerTexts()).resolves.toEqual(['account.disable']);
          await expect(page.getByLabel('Since (day, UTC)').getAttribute('type')).resolves.toBe('date');
          const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
          await page.getByLabel('Action').selectOption({ label: 'Any action' });
          await page.getByLabel('Since (day, UTC)').fill(day(1));
          await press(page, 'Filter');
          expect(new URL(page.url()).searchParams.get('since')).toBe(day(1));
          await expect(page.locator('tbody tr').count()).resolves.toBe(0);
          expect(await main(page)).toContain('No changes recorded for these filters.');
          await page.getByLabel('Since (day, UTC)').fill(day(-1));
          await press(page, 'Filter');
          await expect(page.getByLabel('Since (day, UTC)').inputValue()).resolves.toBe(day(-1));
          await expect(row(page, `Disabled the login of ${named}`).count()).resolves.toBe(1);

          // Revoked, the key is still named by its label: in the question, the notice and the audit page's "By".
          await asOperator.page.goto(pageUrl(tenant.tenantId, 'settings'));
          await press(asOperator.page, `Revoke ${label} ${issued.keyId}`);
          expect(await asOperator.page.getByRole('alert').innerText()).toContain(
            `Revoke the admin key ${label} (${issued.keyId})?`,
          );
          await press(asOperator.page, 'Confirm');
          await expect(asOperator.page.getByRole('status').innerText()).resolves.toBe(
            `The admin key ${label} (${issued.keyId}) is revoked.`,
          );
          await asOperator.page.goto(pageUrl(tenant.tenantId, 'audit'));
          await expect(
            row(asOperator.page, `Disabled the login of ${named}`).getByRole('cell').nth(2).innerText(),
          ).resolves.toBe(`admin key ${label} ${issued.keyId}`);
          await expect(row(asOperator.page, `Revoked the admin key ${label}`).count()).resolves.toBe(1);
          await shot(asOperator.page, 'jobs-audit-key-label');
        } finally {
          await context.close();
          await asOperator.context.close();
        }
      },
    );
  });
});
