// Dependencies that are down from the start: the issuer's key set and Redis.
import { describe, it, expect, afterAll } from '@jest/globals';
import type { System } from '../infra/system.js';
import { startTestSystem } from './support/system.js';
import { adminClient, setupTenant } from './support/admin.js';
import { launchBrowser } from './support/browser.js';
import { obtainTokens } from './support/oauth.js';
import { callApi } from './support/api.js';

const systems: System[] = [];
afterAll(async () => {
  for (const s of systems) await s.close();
});

describe('gateway with a dependency down', () => {
  it('answers 503 token_verification_unavailable when the issuer key set cannot be fetched', async () => {
    const system = await startTestSystem();
    systems.push(system);
    const tenant = await setupTenant(adminClient(system));
    const browser = await launchBrowser();
    const { access_token } = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, 'svc.profile.self.read').finally(() => browser.close());
    await system.services.issuer.close(); // the gateway has not fetched the key set yet
    const res = await callApi(system.baseUrl, 'getMe', '/me', access_token);
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('token_verification_unavailable');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('answers 503 authorization_unavailable with retry-after when the backend is down, after an allow', async () => {
    const system = await startTestSystem();
    systems.push(system);
    const tenant = await setupTenant(adminClient(system));
    const browser = await launchBrowser();
    const { access_token } = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, 'svc.profile.self.read').finally(() => browser.close());
    await system.services.backend.close();
    const res = await callApi(system.baseUrl, 'getMe', '/me', access_token);
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('authorization_unavailable');
    expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
  });

  it('keeps serving and limiting in-process when Redis is unreachable', async () => {
    const system = await startTestSystem({ REDIS_URL: 'redis://127.0.0.1:1' });
    systems.push(system);
    const admin = adminClient(system);
    const tenant = await setupTenant(admin);
    await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { rateLimit: { tenant: { points: 100, durationS: 60 }, account: { points: 2, durationS: 60 } } });
    const browser = await launchBrowser();
    const { access_token } = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, 'svc.profile.self.read').finally(() => browser.close());
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await fetch(`${system.baseUrl}/me`, { headers: { authorization: `Bearer ${access_token}` } })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
