// Dependencies that fail: the issuer's key set, the backend and Redis. Each case gets a system of its own, since
// it breaks one of its parts.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { obtainTokens } from '../support/oauth.js';
import { callApi } from '../support/api.js';

describe('gateway-dependencies', () => {
  let browser: Browser;
  const systems: System[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    for (const s of systems) await s.close();
  });

  /** A fresh system (with `env`), a tenant whose limits are `accountPoints` per minute, and a consented token. */
  async function systemWithToken(env: Record<string, string> = {}, accountPoints = 600) {
    const system = await startTestSystem(env);
    systems.push(system);
    const admin = adminClient(system);
    const tenant = await setupTenant(admin);
    await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
      rateLimit: { tenant: { points: 1000, durationS: 60 }, account: { points: accountPoints, durationS: 60 } },
    });
    const { access_token } = await obtainTokens(
      browser,
      { authUrl: system.authUrl, ...tenant },
      tenant,
      'svc.profile.self.read',
    );
    return { system, getMe: () => callApi(system.baseUrl, 'getMe', '/me', access_token) };
  }

  describe('gateway with a dependency down', () => {
    it('answers 503 token_verification_unavailable when the issuer key set cannot be fetched', async () => {
      const { system, getMe } = await systemWithToken();
      await system.services.issuer.close(); // the gateway has not fetched the key set yet
      const res = await getMe();
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('token_verification_unavailable');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });

    it('answers 503 authorization_unavailable with retry-after when the backend is down, after an allow', async () => {
      const { system, getMe } = await systemWithToken();
      await system.services.backend.close();
      const res = await getMe();
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('authorization_unavailable');
      expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    });

    it('keeps serving and limiting in-process when Redis is unreachable', async () => {
      const { getMe } = await systemWithToken({ REDIS_URL: 'redis://127.0.0.1:1' }, 2);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await getMe()).status);
      expect(statuses).toEqual([200, 200, 429]);
    });
  });
});
