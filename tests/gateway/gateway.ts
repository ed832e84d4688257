// The gateway's filter chain under bad tokens, denials, rate limits and failing dependencies.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { SignJWT, generateKeyPair, importJWK, type JWK } from 'jose';
import { readFileSync } from 'node:fs';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { obtainTokens } from '../support/oauth.js';
import { callApi } from '../support/api.js';
import { expectProblem } from '../support/problems.js';

describe('gateway', () => {
  let system: System;
  let browser: Browser;
  let admin: AdminClient;

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    admin = adminClient(system);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const OPERATION: Record<string, string> = { '/me': 'getMe', '/tenant': 'getTenant' };
  const get = (path: '/me' | '/tenant', token?: string, headers: Record<string, string> = {}) =>
    callApi(system.baseUrl, OPERATION[path]!, path, token, { headers });

  async function tokenFor(tenant: TenantSetup, scope = 'svc.profile.self.read svc.tenant.info.read') {
    const tokens = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, scope);
    return tokens.access_token;
  }

  /** The answer is the Problem `error` with `status` (shape, headers and requestId are checked by callApi). */
  /** Signs `claims` with the issuer's own key (taken from its key table), to test checks beyond the signature. */
  async function signWithIssuerKey(claims: Record<string, unknown>, header: Record<string, unknown>) {
    const row = await system.db.knex('issuer_keys').first();
    const jwk = row.private_jwk as JWK;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, ...header })
      .sign(await importJWK(jwk, 'ES256'));
  }

  describe('gateway authentication', () => {
    let tenant: TenantSetup;
    let claims: Record<string, unknown>;
    beforeAll(async () => {
      tenant = await setupTenant(admin);
      const token = await tokenFor(tenant);
      claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    });

    it.each([
      ['a malformed bearer value', 'not-a-jwt'],
      ['a token with a bad signature', 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJ4In0.AAAA'],
    ])('rejects %s with 401 invalid_token', async (_name, token) => {
      const res = await get('/me', token);
      expectProblem(res, 401, 'invalid_token');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it('accepts the bearer scheme in any letter case', async () => {
      const token = await signWithIssuerKey(claims, { typ: 'at+jwt' });
      const res = await callApi(system.baseUrl, 'getMe', '/me', undefined, {
        headers: { authorization: `bearer ${token}` },
      });
      expect(res.status).toBe(200);
    });

    it('rejects a token signed by a key outside the issuer key set, under the issuer kid or none', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const { kid } = (await system.db.knex('issuer_keys').first()).private_jwk as JWK;
      for (const header of [{ kid }, {}]) {
        const forged = await new SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...header })
          .sign(privateKey);
        expectProblem(await get('/me', forged), 401, 'invalid_token');
      }
    });

    it.each([
      ['an ID token (typ JWT)', {}, { typ: 'JWT' }],
      ['a wrong audience', { aud: 'tp_other' }, {}],
      ['a wrong issuer', { iss: 'http://evil.example' }, {}],
      ['an expired token', { exp: Math.floor(Date.now() / 1000) - 60 }, {}],
    ])('rejects %s even with a valid issuer signature', async (_name, claimOverrides, headerOverrides) => {
      const good = await signWithIssuerKey(claims, { typ: 'at+jwt' });
      expect((await get('/me', good)).status).toBe(200); // the same claims, correctly typed, pass
      const bad = await signWithIssuerKey({ ...claims, ...claimOverrides }, { typ: 'at+jwt', ...headerOverrides });
      expectProblem(await get('/me', bad), 401, 'invalid_token');
    });

    it('denies delegated and shared profiles with 403 profile_not_supported', async () => {
      for (const profile of ['delegated', 'shared']) {
        const token = await signWithIssuerKey({ ...claims, profile }, { typ: 'at+jwt' });
        expectProblem(await get('/me', token), 403, 'profile_not_supported');
      }
    });
  });

  describe('gateway authorization on the next request', () => {
    it('applies client disabling, tenant suspension and epoch advance without waiting for token expiry', async () => {
      const tenant = await setupTenant(admin);
      const token = await tokenFor(tenant);
      expect((await get('/tenant', token)).status).toBe(200);

      await admin.ok('PATCH', `/clients/${tenant.clientId}`, { status: 'disabled' });
      expectProblem(await get('/me', token), 403, 'client_disabled');
      await admin.ok('PATCH', `/clients/${tenant.clientId}`, { status: 'active' });

      await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { status: 'suspended' });
      expectProblem(await get('/tenant', token), 403, 'tenant_suspended');
      await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { status: 'active' });

      await system.db.knex('accounts').where({ id: tenant.accountId }).increment('epoch', 1);
      expectProblem(await get('/me', token), 403, 'epoch_changed');
    });

    it(
      'denies an in-flight token with 403 subject_revoked ' + 'once the tenant ends its relationship with the person',
      async () => {
        const tenant = await setupTenant(admin);
        const token = await tokenFor(tenant);
        expect((await get('/me', token)).status).toBe(200);
        await admin.ok('DELETE', `/tenants/${tenant.tenantId}/persons/${tenant.personId}`);
        expectProblem(await get('/me', token), 403, 'subject_revoked');
      },
    );

    it(
      'decides concurrent requests of different apps together, ' +
        'each on its own state: fewer PDP calls than requests',
      async () => {
        const [open, disabled] = [await setupTenant(admin), await setupTenant(admin)];
        const [openToken, disabledToken] = [await tokenFor(open), await tokenFor(disabled)];
        await admin.ok('PATCH', `/clients/${disabled.clientId}`, { status: 'disabled' });
        const histogram = async () =>
          (await system.telemetry.registry.getSingleMetric('gateway_pdp_decisions_per_call')!.get()).values;
        const total = async (name: string) =>
          (await histogram()).find((v) => (v as { metricName?: string }).metricName === name)?.value ?? 0;
        const [callsBefore, decisionsBefore] = [
          await total('gateway_pdp_decisions_per_call_count'),
          await total('gateway_pdp_decisions_per_call_sum'),
        ];
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => get('/me', i % 2 ? disabledToken : openToken)),
        );
        expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 ? 403 : 200)));
        const [calls, decisions] = [
          (await total('gateway_pdp_decisions_per_call_count')) - callsBefore,
          (await total('gateway_pdp_decisions_per_call_sum')) - decisionsBefore,
        ];
        expect(decisions).toBe(20);
        expect(calls).toBeLessThan(20);
      },
    );

    it('answers 403 capability_not_in_token for a granted capability the token was not issued for', async () => {
      const tenant = await setupTenant(admin);
      const token = await tokenFor(tenant, 'svc.profile.self.read');
      expectProblem(await get('/tenant', token), 403, 'capability_not_in_token');
    });
  });

  describe('gateway rate limiting', () => {
    it(
      'answers 429 rate_limited with retry-after once the ' +
        'account layer is spent, counting down x-ratelimit-remaining',
      async () => {
        const tenant = await setupTenant(admin);
        await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
          rateLimit: { tenant: { points: 100, durationS: 60 }, account: { points: 3, durationS: 60 } },
        });
        const token = await tokenFor(tenant);
        const remaining: number[] = [];
        for (let i = 0; i < 3; i++) {
          const res = await get('/me', token);
          expect(res.status).toBe(200);
          remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
        }
        expect(remaining).toEqual([2, 1, 0]);
        const limited = await get('/me', token);
        expectProblem(limited, 429, 'rate_limited');
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      },
    );

    it(
      'refuses a spent account ahead of the PDP: ' + '300 calls at 5 a minute cost 6 decisions and 6 decision-log rows',
      async () => {
        const tenant = await setupTenant(admin);
        await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
          rateLimit: { tenant: { points: 100, durationS: 60 }, account: { points: 5, durationS: 60 } },
        });
        const token = await tokenFor(tenant);
        const decisionsSoFar = async () =>
          (await system.telemetry.decisions.get()).values.reduce((sum, v) => sum + v.value, 0);
        const before = await decisionsSoFar();
        const statuses: number[] = [];
        for (let i = 0; i < 300; i++) {
          const res = await fetch(`${system.baseUrl}/me`, { headers: { authorization: `Bearer ${token}` } });
          await res.arrayBuffer();
          statuses.push(res.status);
        }
        expect(statuses.filter((s) => s === 200)).toHaveLength(5);
        expect(statuses.filter((s) => s === 429)).toHaveLength(295);
        // The sixth call paid a decision before its window was found full; the 294 after it were refused from memory.
        expect((await decisionsSoFar()) - before).toBe(6);
        const logged = async () =>
          Number(
            (await system.db.knex('decision_logs').where('tenant_id', tenant.tenantId).count({ n: '*' }).first())!.n,
          );
        while ((await logged()) < 6) await new Promise((r) => setTimeout(r, 100));
        expect(await logged()).toBe(6);
        // The local refusal is the same answer as the shared limiter's: a Problem with the time left in the window.
        const blocked = await get('/me', token);
        expectProblem(blocked, 429, 'rate_limited');
        expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(50);
      },
    );
  });

  describe('request ids', () => {
    it('keeps a well-formed caller request id and replaces a malformed one', async () => {
      const kept = await get('/me', undefined, { 'x-request-id': 'client-req-0001' });
      expect(kept.headers.get('x-request-id')).toBe('client-req-0001');
      const replaced = await get('/me', undefined, { 'x-request-id': 'bad id with spaces' });
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('answers an unknown path with a 404 Problem', async () => {
      const res = await fetch(`${system.baseUrl}/nope`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toEqual({ error: 'not_found', requestId: res.headers.get('x-request-id') });
    });

    it('answers an OPTIONS probe with a 404 Problem instead of listing methods', async () => {
      const res = await fetch(`${system.baseUrl}/me`, { method: 'OPTIONS' });
      expect(res.status).toBe(404);
      expect(res.headers.get('allow')).toBeNull();
      expect((await res.json()).error).toBe('not_found');
    });

    it('serves the public OpenAPI document without a token', async () => {
      const res = await callApi(system.baseUrl, 'getOpenApiDocument', '/openapi.json');
      expect(res.status).toBe(200);
      expect(res.body.openapi).toMatch(/^3\.1/);
      expect(Object.keys(res.body.paths)).toContain('/me');
    });

    it('serves the developer guide beside it, without a token', async () => {
      const res = await callApi(system.baseUrl, 'getApiGuide', '/api-guide.md');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(res.body).toBe(readFileSync(new URL('../../docs/api-guide.md', import.meta.url), 'utf8'));
    });
  });

  describe('failing dependencies (fail closed)', () => {
    it(
      'answers 503 authorization_unavailable with retry-after when the PDP is down, never an allow, ' +
        'and still 403 profile_not_supported to a delegated or shared token (a 403 is never shaped like a 503)',
      async () => {
        const tenant = await setupTenant(admin);
        const token = await tokenFor(tenant);
        expect((await get('/me', token)).status).toBe(200);
        await system.services.policies.close();
        const res = await get('/me', token);
        expectProblem(res, 503, 'authorization_unavailable');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
        for (const profile of ['delegated', 'shared']) {
          const other = await signWithIssuerKey({ ...claims, profile }, { typ: 'at+jwt' });
          expectProblem(await get('/me', other), 403, 'profile_not_supported');
        }
      },
    );
  });
});
