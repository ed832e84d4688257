// Password guessing (issue 20, finding 2): failed sign-ins are limited per username and per address on both sign-in
// forms (the authorize step and connected apps), with one budget; a throttled attempt is told to wait whether or not
// the username exists, and the right password works again once the wait is over.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { setTimeout as sleep } from 'node:timers/promises';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { authorizationRequest, discover } from '../support/oauth.js';
import { credentialThrottle, SIGN_IN_LIMITS } from '../../common/credential-throttle.js';
import { connectRedis, limiterStore } from '../../common/rate-limit-store.js';
import { createLogger } from '../../common/log.js';
import { HashingBusy, hashLane, hashSecret } from '../../common/secrets.js';

describe('sign-in-throttle', () => {
  let system: System;
  let browser: Browser;
  let tenant: TenantSetup;
  let context: BrowserContext;

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    tenant = await setupTenant(adminClient(system));
    context = await browser.newContext();
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await system?.close();
  });

  /** A login page of a fresh authorization request: the form's action URL, and the page (its cookies) to post with. */
  async function loginForm(): Promise<{ page: Page; action: string }> {
    const config = await discover({ authUrl: system.authUrl, ...tenant });
    const request = await authorizationRequest(config, tenant.redirectUri, 'svc.profile.self.read');
    const page = await context.newPage();
    await page.goto(request.url.toString());
    const action = await page.locator('form').getAttribute('action');
    return { page, action: new URL(action!, system.authUrl).toString() };
  }
  const attempt = async (form: { page: Page; action: string }, username: string, password: string) => {
    const res = await form.page.request.post(form.action, { form: { username, password }, maxRedirects: 0 });
    return { status: res.status(), retryAfter: res.headers()['retry-after'], text: await res.text() };
  };

  describe('sign-in throttling', () => {
    it(
      'answers 429 "wait" after the username budget, for a real and ' +
        'for an unknown username alike, then also to the right password',
      async () => {
        const form = await loginForm();
        const budget = SIGN_IN_LIMITS.perSubject.points;
        for (const username of [tenant.username, 'nobody-by-this-name']) {
          for (let i = 0; i < budget; i++) expect((await attempt(form, username, `wrong ${i}`)).status).toBe(401);
          const refused = await attempt(form, username, 'wrong again');
          expect(refused.status).toBe(429);
          expect(Number(refused.retryAfter)).toBeGreaterThan(0);
          expect(refused.text).toMatch(/Too many sign-in attempts\. Wait \d+ minutes? and try again\./);
        }
        // Locked out: even the right password waits, and says the same as for the unknown name.
        const right = await attempt(form, tenant.username, tenant.password);
        expect(right.status).toBe(429);
        // The connected-apps sign-in shares the budget.
        const apps = await context.request.post(`${system.authUrl}/account/apps`, {
          form: { username: tenant.username, password: tenant.password },
          maxRedirects: 0,
        });
        expect(apps.status()).toBe(429);
        await form.page.close();
      },
    );
  });

  describe('wrong admin credentials', () => {
    it(
      'make their address wait after the budget, admin API and console sign-in alike, ' +
        'while a right credential from there is still answered (issue 32), and leave other addresses alone',
      async () => {
        // Its own system: a budget of 3, and one trusted proxy hop so that the test can speak from two addresses.
        const admin = await startTestSystem({ ADMIN_FAILURES_PER_ADDRESS: '3', TRUST_PROXY: '1' });
        try {
          const call = (address: string, token: string) =>
            fetch(`${admin.pdpUrl}/admin/v1/audit/verify`, {
              headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': address },
            });
          for (let i = 0; i < 3; i++)
            expect((await call('203.0.113.5', `wrong-token-${i}-0123456789`)).status).toBe(401);
          // Past the budget a wrong credential from that address waits; the operator's own token is still answered.
          const limited = await call('203.0.113.5', 'wrong-token-3-0123456789');
          expect(limited.status).toBe(429);
          expect(await limited.json()).toMatchObject({ error: 'rate_limited' });
          expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
          expect((await call('203.0.113.5', admin.adminToken)).status).toBe(200);
          expect((await call('198.51.100.20', admin.adminToken)).status).toBe(200);
          // The console's sign-in shares the count: a wrong key waits, the right one signs in.
          const consoleUrl = `${admin.pdpUrl}/admin/console`;
          const signIn = async (key: string) => {
            const form = await fetch(`${consoleUrl}/sign-in`);
            const cookie = form.headers.get('set-cookie')!.split(';')[0]!;
            const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
            return fetch(`${consoleUrl}/sign-in`, {
              method: 'POST',
              redirect: 'manual',
              headers: { cookie, 'x-forwarded-for': '203.0.113.5' },
              body: new URLSearchParams({ _csrf: csrf, key }),
            });
          };
          const wrong = await signIn('wrong-key-0123456789');
          expect(wrong.status).toBe(429);
          expect(await wrong.text()).toMatch(/Too many sign-in attempts\. Wait \d+ minutes? and try again\./);
          expect((await signIn(admin.adminToken)).status).toBe(303);
        } finally {
          await admin.close();
        }
      },
    );
  });

  describe('hashing under a flood of anonymous sign-ins', () => {
    it(
      'answers sign-ins past the hashing lane 503 with retry-after, ' +
        'while tenant admin keys, in a lane of their own, are still checked',
      async () => {
        const operator = adminClient(system);
        const { key } = await operator.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`);
        const keyCall = () =>
          fetch(`${system.pdpUrl}/admin/v1/tenants/${tenant.tenantId}/grants/${tenant.clientId}`, {
            headers: { authorization: `Bearer ${key}` },
          }).then((res) => res.status);
        const signIn = (n: number) =>
          fetch(`${system.authUrl}/account/apps`, {
            method: 'POST',
            redirect: 'manual',
            body: new URLSearchParams({ username: `flood-${n}-${Date.now()}`, password: 'guess' }),
          }).then(async (res) => ({
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            text: await res.text(),
          }));
        const flood = Promise.all(Array.from({ length: 60 }, (_, n) => signIn(n)));
        // While the sign-in lane is full, every admin key is still checked and answered (no 503: its lane is another).
        const keyStatuses = await Promise.all(Array.from({ length: 5 }, keyCall));
        const answers = await flood;
        expect(keyStatuses).toEqual([200, 200, 200, 200, 200]);
        expect(new Set(answers.map((a) => a.status))).toEqual(new Set([401, 503]));
        const busy = answers.filter((a) => a.status === 503);
        expect(busy.every((a) => Number(a.retryAfter) >= 1 && /busy/.test(a.text))).toBe(true);
        // 2 hashing and 16 waiting at most: sign-ins arriving past that are turned away at once rather than queued.
        expect(busy.length).toBeGreaterThan(0);
      },
    );
  });

  describe('hashing under a flood of wrong client secrets', () => {
    it(
      'answers the token requests past the credential lane 429 ' +
        'TokenError with retry-after, never a status outside the contract',
      async () => {
        const { clientId } = await setupTenant(adminClient(system), { type: 'confidential' });
        // Only a secret still stored with scrypt (as before issue 32) is hashed; a digest is checked without a lane.
        await system.db
          .knex('client_secrets')
          .where({ client_id: clientId })
          .update({ secret_hash: await hashSecret('x') });
        const basic =
          'Basic ' + `${Buffer.from(`${encodeURIComponent(clientId)}:wrong-secret-0123456789`).toString('base64')}`;
        const answers = await Promise.all(
          Array.from({ length: 110 }, () =>
            fetch(`${system.authUrl}/oauth2/token`, {
              method: 'POST',
              headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token' }),
            }).then(async (res) => ({
              status: res.status,
              retryAfter: res.headers.get('retry-after'),
              body: await res.json(),
            })),
          ),
        );
        expect(new Set(answers.map((a) => a.status))).toEqual(new Set([401, 429]));
        const tryLater = answers.filter((a) => a.status === 429);
        expect(tryLater.every((a) => Number(a.retryAfter) >= 1 && a.body.error === 'invalid_client')).toBe(true);
        // The lane turned some away at once. On a machine busy enough for the database to miss its deadline, others get
        // the same answer for that reason ("temporarily unavailable"): a 429 too, never another status.
        expect(tryLater.some((a) => /busy/.test(a.body.error_description))).toBe(true);
      },
    );
  });

  describe('the hashing lane itself', () => {
    it('runs at most its cap at once, queues up to its waiting room, and refuses the rest at once', async () => {
      const lane = hashLane('test', 1, 1);
      const gates: (() => void)[] = [];
      const work = () => lane.run(() => new Promise<string>((resolve) => gates.push(() => resolve('done'))));
      const first = work();
      const second = work(); // waits for the first's slot
      await expect(work()).rejects.toBeInstanceOf(HashingBusy);
      expect(gates).toHaveLength(1);
      gates[0]!();
      expect(await first).toBe('done');
      await new Promise((r) => setImmediate(r));
      expect(gates).toHaveLength(2); // the slot went to the waiting check
      gates[1]!();
      expect(await second).toBe('done');
      const third = work(); // room again once both are done
      gates[2]!();
      expect(await third).toBe('done');
    });
  });

  describe('the throttle itself', () => {
    const limits = { perSubject: { points: 3, durationS: 1 }, perAddress: { points: 5, durationS: 1 } };
    const stores = async () => {
      const redis = await connectRedis(process.env.REDIS_URL, createLogger('test', 'silent'));
      return { store: limiterStore(redis), close: () => redis?.disconnect() };
    };

    it('lets the right person in once the window has passed, and a success clears the consecutive failures', async () => {
      const { store, close } = await stores();
      try {
        const throttle = credentialThrottle(store, `test-${Date.now()}`, limits);
        for (let i = 0; i < 3; i++) await throttle.failed('alice', '10.0.0.1');
        expect(await throttle.waitSeconds('alice', '10.0.0.2')).toBeGreaterThan(0);
        expect(await throttle.waitSeconds('bob', '10.0.0.2')).toBeUndefined();
        await sleep(1100);
        expect(await throttle.waitSeconds('alice', '10.0.0.2')).toBeUndefined();
        for (let i = 0; i < 2; i++) await throttle.failed('alice', '10.0.0.3');
        await throttle.succeeded('alice');
        await throttle.failed('alice', '10.0.0.4');
        expect(await throttle.waitSeconds('Alice', '10.0.0.4')).toBeUndefined();
      } finally {
        close();
      }
    });

    it('stops an address that tries many usernames', async () => {
      const { store, close } = await stores();
      try {
        const throttle = credentialThrottle(store, `test-${Date.now()}`, limits);
        for (let i = 0; i < 5; i++) await throttle.failed(`user-${i}`, '10.0.0.9');
        expect(await throttle.waitSeconds('someone-new', '10.0.0.9')).toBeGreaterThan(0);
        expect(await throttle.waitSeconds('someone-new', '10.0.0.10')).toBeUndefined();
      } finally {
        close();
      }
    });
  });
});
