// Secrets the platform generates (client secrets, tenant admin keys, the operator token) are stored as SHA-256 digests
// and checked before any per-address count of wrong credentials (issue 32): a right credential is answered whatever
// others sent from its address, a secret stored with scrypt before the change still works and is re-stored as its
// digest, and no secret or stored form reaches a log line.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { digestSecret, hashSecret, verifySecret } from '../../common/secrets.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupMachineClient, setupTenant, type AdminClient } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { basicAuth, obtainTokens } from '../support/oauth.js';

describe('platform-secrets', () => {
  const SCOPE = 'svc.profile.self.read';
  const GUESSES = 150;

  let system: System;
  let operator: AdminClient;
  let browser: Browser;
  const logLines: string[] = [];
  /** Every secret the tests below were given or sent, right or wrong: none may reach a log line. */
  const secretsUsed: string[] = [];

  beforeAll(async () => {
    [system, browser] = await Promise.all([
      startTestSystem(
        // The default budget of wrong admin credentials (100 an address); one trusted proxy hop, so that each test
        // speaks from an address of its own; token limits far above what the concurrency tests send.
        {
          LOG_LEVEL: 'debug',
          TRUST_PROXY: '1',
          ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
          TOKEN_RATE_LIMIT_PER_CLIENT: '1000000',
          TOKEN_RATE_LIMIT_PER_ADDRESS: '1000000',
        },
        {},
        { logDestination: { write: (line: string) => void logLines.push(line) } },
      ),
      launchBrowser(),
    ]);
    operator = adminClient(system);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const adminCall = (address: string, bearer: string, path = '/audit/verify') =>
    fetch(`${system.pdpUrl}/admin/v1${path}`, {
      headers: { authorization: `Bearer ${bearer}`, 'x-forwarded-for': address },
    });

  /** `count` wrong bearers from `address`; the statuses they got. */
  async function guess(address: string, count: number, wrong: (i: number) => string): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      secretsUsed.push(wrong(i));
      statuses.push((await adminCall(address, wrong(i))).status);
    }
    return statuses;
  }

  /**
   * Wrong credentials are counted per address: none is refused before the budget of 100 is spent, and past it they are
   * answered 429 (a count lost to a store timeout on a busy machine may put off the first 429 by a few).
   */
  const expectCountedThenSlowed = (statuses: number[]) => {
    expect(statuses.slice(0, 100).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(100)).toContain(429);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  };

  describe('a right admin credential after wrong ones from its address', () => {
    it('answers the operator token 200 after 150 wrong bearer keys from the same address', async () => {
      const address = '203.0.113.10';
      expectCountedThenSlowed(await guess(address, GUESSES, (i) => `wrong-token-${i}-0123456789abcdef`));
      expect((await adminCall(address, system.adminToken)).status).toBe(200);
    });

    it('answers a tenant admin key 200 after 150 guesses that name its key id', async () => {
      const tenant = await setupTenant(operator);
      const { keyId, key } = (await operator.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`)) as {
        keyId: string;
        key: string;
      };
      secretsUsed.push(key);
      const address = '203.0.113.11';
      expectCountedThenSlowed(await guess(address, GUESSES, (i) => `${keyId}.guess-${i}-0123456789abcdef`));
      const grant = `/tenants/${tenant.tenantId}/grants/${tenant.clientId}`;
      expect((await adminCall(address, key, grant)).status).toBe(200);
    });

    it('signs in to the console with the right key after 150 wrong ones from the same address', async () => {
      const consoleUrl = `${system.pdpUrl}/admin/console`;
      const address = '203.0.113.12';
      const signIn = async (key: string) => {
        const form = await fetch(`${consoleUrl}/sign-in`);
        const cookie = form.headers.get('set-cookie')!.split(';')[0]!;
        const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
        const res = await fetch(`${consoleUrl}/sign-in`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie, 'x-forwarded-for': address },
          body: new URLSearchParams({ _csrf: csrf, key }),
        });
        return { status: res.status, location: res.headers.get('location'), text: await res.text() };
      };
      const statuses: number[] = [];
      for (let i = 0; i < GUESSES; i++) statuses.push((await signIn(`wrong-key-${i}-0123456789abcdef`)).status);
      expectCountedThenSlowed(statuses);
      const right = await signIn(system.adminToken);
      expect(right.status).toBe(303);
      expect(right.location).toMatch(/\/admin\/console\/$/);
    });
  });

  describe('secrets stored with scrypt before the change', () => {
    it('authenticate a tenant admin key, which is then stored as its digest; a wrong key matches neither form', async () => {
      const tenant = await setupTenant(operator);
      const { keyId, key } = (await operator.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`)) as {
        keyId: string;
        key: string;
      };
      secretsUsed.push(key);
      const keys = () => system.db.knex('tenant_admin_keys').where({ id: keyId }).first('key_hash');
      expect((await keys()).key_hash).toBe(digestSecret(key));
      const old = await hashSecret(key);
      await system.db.knex('tenant_admin_keys').where({ id: keyId }).update({ key_hash: old });
      const grant = `/tenants/${tenant.tenantId}/grants/${tenant.clientId}`;
      const wrong = `${keyId}.not-the-secret-0123456789abcdef`;

      expect((await adminCall('198.51.100.30', wrong, grant)).status).toBe(401);
      expect((await keys()).key_hash).toBe(old); // a wrong key changes nothing
      expect((await adminCall('198.51.100.30', key, grant)).status).toBe(200);
      expect((await keys()).key_hash).toBe(digestSecret(key));
      expect((await adminCall('198.51.100.30', key, grant)).status).toBe(200);
      expect((await adminCall('198.51.100.30', wrong, grant)).status).toBe(401);
      expect([await verifySecret(wrong, old), await verifySecret(wrong, digestSecret(key))]).toEqual([false, false]);
    });

    it('authenticate a client secret at the token endpoint, which is then stored as its digest', async () => {
      const app = await setupMachineClient(operator, { grant: [SCOPE] });
      secretsUsed.push(app.clientSecret);
      const rows = () => system.db.knex('client_secrets').where({ client_id: app.clientId }).pluck('secret_hash');
      expect(await rows()).toEqual([digestSecret(app.clientSecret)]);
      const old = await hashSecret(app.clientSecret);
      await system.db.knex('client_secrets').where({ client_id: app.clientId }).update({ secret_hash: old });
      const token = (secret: string) =>
        fetch(`${system.authUrl}/oauth2/token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: basicAuth(app.clientId, secret),
            'x-forwarded-for': '198.51.100.31',
          },
          body: new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE }).toString(),
        }).then((res) => res.status);

      expect(await token('not-the-secret-0123456789abcdef')).toBe(401);
      expect(await rows()).toEqual([old]);
      expect(await token(app.clientSecret)).toBe(200);
      expect(await rows()).toEqual([digestSecret(app.clientSecret)]);
      expect(await token(app.clientSecret)).toBe(200);
      expect(await token('not-the-secret-0123456789abcdef')).toBe(401);
    });

    it('never match a digest of another length or an unknown scheme', async () => {
      const secret = 'a-secret-0123456789abcdef';
      expect(await verifySecret(secret, digestSecret(secret).slice(0, -4))).toBe(false);
      expect(await verifySecret(secret, `md5$${digestSecret(secret).split('$')[1]}`)).toBe(false);
      expect(await verifySecret(secret, digestSecret(secret))).toBe(true);
    });
  });

  describe('machine clients under concurrency', () => {
    it('answers 100 client_credentials grants at once 200, none 503 or "busy"', async () => {
      const app = await setupMachineClient(operator, { grant: [SCOPE] });
      const answers = await Promise.all(
        Array.from({ length: 100 }, () =>
          fetch(`${system.authUrl}/oauth2/token`, {
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              authorization: basicAuth(app.clientId, app.clientSecret),
            },
            body: new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE }).toString(),
          }).then(async (res) => ({ status: res.status, body: await res.text() })),
        ),
      );
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    });

    it('answers a confidential client’s refresh chains, run side by side, 200 at every step', async () => {
      const tenant = await setupTenant(operator, { type: 'confidential' });
      const app = { authUrl: system.authUrl, ...tenant };
      const chains = await Promise.all(Array.from({ length: 4 }, () => obtainTokens(browser, app, tenant, SCOPE)));
      const refresh = async (token: string) => {
        const res = await fetch(`${system.authUrl}/oauth2/token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: basicAuth(tenant.clientId, tenant.clientSecret!),
          },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
        });
        return { status: res.status, body: (await res.json()) as { refresh_token?: string } };
      };
      const statuses = await Promise.all(
        chains.map(async ({ refresh_token }) => {
          const seen: number[] = [];
          let token = refresh_token!;
          for (let i = 0; i < 10; i++) {
            const answer = await refresh(token);
            seen.push(answer.status);
            if (answer.status !== 200) break;
            token = answer.body.refresh_token!;
          }
          return seen;
        }),
      );
      expect(statuses).toEqual(chains.map(() => Array(10).fill(200)));
    });
  });

  describe('the log', () => {
    it('carries no secret and no stored form of one', async () => {
      // Everything above has run: keys and client secrets created, used, guessed, and re-stored from scrypt.
      const stored = [
        ...(await system.db.knex('client_secrets').pluck('secret_hash')),
        ...(await system.db.knex('tenant_admin_keys').pluck('key_hash')),
      ] as string[];
      const needles = [
        system.adminToken,
        ...secretsUsed,
        ...[system.adminToken, ...secretsUsed].map(digestSecret),
        ...stored,
        ...stored.map((s) => s.split('$').at(-1)!),
      ];
      expect(logLines.length).toBeGreaterThan(0);
      const text = logLines.join('');
      expect(needles.filter((n) => text.includes(n))).toEqual([]);
      expect(text).not.toMatch(/sha256\$|scrypt\$/);
    });
  });
});
