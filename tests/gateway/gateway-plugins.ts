// The gateway started from gateway files next to a running system: editing the file and restarting changes what it
// does (a new route, a route's rate-limit window, a CORS origin list); two instances sharing Redis enforce one limit;
// metering, the flood guard, 401 challenges, HEAD and Node's own parser answers.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import type { Running } from '../../common/service.js';
import { listen, type Listening } from '../../common/http.js';
import { createLogger } from '../../common/log.js';
import { GatewayFileError } from '../../gateway/gateway-file.js';
import { createTelemetry } from '../../common/telemetry.js';
import { startGateway } from '../../gateway/service.js';
import { ALLOWED_REPLAYS } from '../../gateway/plugins/metering/usage-meter.js';
import { createBackendApp } from '../../backend/app.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { obtainTokens } from '../support/oauth.js';
import { editedGatewayFile, gatewayFileDirectory, SHIPPED_GATEWAY_FILE } from '../support/gateway-files.js';
import { rawHeader, rawHttp, rawJson } from '../support/raw-http.js';
import { dpopKey, makeProof } from '../support/dpop.js';

describe('gateway-plugins', () => {
  const INTERNAL_SECRET = 'gateway-plugins-test-secret-0123456789';
  /** Two gateways share one limit only through Redis; the machine's Redis unless REDIS_URL names another. */
  const SHARED_REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const files = gatewayFileDirectory('gateway-plugins');

  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  const running = new Set<Running>();

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem({ INTERNAL_SECRET }), launchBrowser()]);
    admin = adminClient(system);
  });
  afterAll(async () => {
    for (const g of running) await g.close();
    await browser?.close();
    await system?.close();
    files.remove();
  });

  /**
   * Writes `text` as a gateway file and starts a gateway from it against the system's issuer, PDP and backend (or the
   * backend at `backendUrl`).
   */
  async function gatewayFrom(
    text: string,
    env: { REDIS_URL?: string } = {},
    backendUrl = system.backendUrl,
  ): Promise<Running> {
    const config = { ...system.config, GATEWAY_CONFIG: files.write(text), GATEWAY_PORT: 0, ...env };
    const targets = { authUrl: system.authUrl, pdpUrl: system.pdpUrl, backendUrl, internalSecret: INTERNAL_SECRET };
    const gateway = await startGateway({
      config,
      log: createLogger('gateway', 'silent'),
      knex: system.db.knex,
      telemetry: createTelemetry(),
      targets,
    });
    running.add(gateway);
    return gateway;
  }
  async function stop(gateway: Running) {
    running.delete(gateway);
    await gateway.close();
  }
  const GET_ME =
    '  - { operationId: getMe, method: GET, path: /me, capability: ' +
    'svc.profile.self.read, resource: self, upstream: backend }';
  const withMeLimit = (points: number) =>
    editedGatewayFile(
      GET_ME,
      `${GET_ME.slice(0, -2)}, plugins: { rate-limit: { account: { points: ${points}, durationS: 60 } } } }`,
    );

  async function tenantWithToken(
    scope = 'svc.profile.self.read svc.tenant.info.read',
  ): Promise<TenantSetup & { token: string }> {
    const tenant = await setupTenant(admin);
    const { access_token } = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, scope);
    return { ...tenant, token: access_token };
  }
  const call = (
    base: string,
    path: string,
    token?: string,
    init: RequestInit & { headers?: Record<string, string> } = {},
  ) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { ...(token && { authorization: `Bearer ${token}` }), ...init.headers },
    });
  const statuses = async (n: number, request: (i: number) => Promise<Response>) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await request(i)).status);
    return out;
  };

  describe('starting from a file', () => {
    it('refuses a bad file with the file, the line and the setting, and listens on nothing', async () => {
      const bad = editedGatewayFile('{ maxBytes: 65536 }', '{ maxBytes: 65536, maxbytes: 1 }');
      const line = bad.split('\n').findIndex((l) => l.includes('maxbytes: 1')) + 1;
      const error = await gatewayFrom(bad).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(GatewayFileError);
      expect((error as Error).message).toMatch(
        new RegExp(`gateway-\\d+\\.yaml:${line}: plugins\\[7\\]\\.config\\.maxbytes: unknown setting`),
      );
    });

    it(
      'serves a route added to the file after a restart, ' + 'forwarding it to its upstream with a signed context',
      async () => {
        const seen: Record<string, string | undefined>[] = [];
        const upstream: Listening & { server: import('node:http').Server } = await listen(0);
        upstream.server.on('request', (req, res) => {
          seen.push({
            path: req.url,
            context: req.headers['x-svc-context'] as string,
            mac: req.headers['x-svc-context-mac'] as string,
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"green"}');
        });
        const tenant = await tenantWithToken();
        try {
          const before = await gatewayFrom(SHIPPED_GATEWAY_FILE);
          expect((await call(before.url, '/status', tenant.token)).status).toBe(404);
          await stop(before);

          const added =
            `${editedGatewayFile('upstreams:\n', `upstreams:\n  status:\n    url: ${upstream.url}\n`)}` +
            '  - { operationId: getStatus, method: GET, path: /status, capability: ' +
            'svc.profile.self.read, resource: self, upstream: status }\n';
          const after = await gatewayFrom(added);
          const res = await call(after.url, '/status', tenant.token);
          expect(res.status).toBe(200);
          expect(await res.json()).toEqual({ status: 'green' });
          expect(seen).toEqual([{ path: '/v1/status', context: expect.any(String), mac: expect.any(String) }]);
          expect((await call(after.url, '/status')).status).toBe(401); // the new route has token verification too
        } finally {
          await upstream.close();
        }
      },
    );

    it('applies a changed rate-limit window of a route after a restart', async () => {
      const tenant = await tenantWithToken();
      const two = await gatewayFrom(withMeLimit(2));
      expect(await statuses(3, () => call(two.url, '/me', tenant.token))).toEqual([200, 200, 429]);
      await stop(two);
      const four = await gatewayFrom(withMeLimit(4));
      expect(await statuses(5, () => call(four.url, '/me', tenant.token))).toEqual([200, 200, 200, 200, 429]);
      expect((await call(four.url, '/tenant', tenant.token)).status).toBe(200); // other routes keep the tenant's policy
    });

    it('applies a changed CORS origin list after a restart', async () => {
      const origin = 'https://app.example.com';
      const preflight = (base: string) =>
        call(base, '/me', undefined, {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'GET',
            'access-control-request-headers': 'authorization',
          },
        });
      const before = await gatewayFrom(SHIPPED_GATEWAY_FILE);
      const refused = await preflight(before.url);
      expect(refused.status).toBe(404);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      await stop(before);

      const after = await gatewayFrom(
        editedGatewayFile(
          'config: { origins: [], clientOrigins: true',
          `config: { origins: ["${origin}"], clientOrigins: true`,
        ),
      );
      const allowed = await preflight(after.url);
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(origin);
      expect(allowed.headers.get('access-control-allow-methods')).toBe('GET');
      expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
      const tenant = await tenantWithToken();
      const res = await call(after.url, '/me', tenant.token, { headers: { origin } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-expose-headers')?.split(', ')).toEqual([
        'etag',
        'location',
        'x-request-id',
        'x-ratelimit-remaining',
        'retry-after',
        'www-authenticate',
      ]);
    });
  });

  describe('CORS from the client registration', () => {
    it("lets only the origins the token's client registered read the answer, and answers their preflight", async () => {
      const tenant = await tenantWithToken();
      const registered = `https://registered-${tenant.tenantId.toLowerCase()}.example`;
      await system.db
        .knex('clients')
        .where({ id: tenant.clientId })
        .update({ allowed_origins: JSON.stringify([registered]) });
      const gateway = await gatewayFrom(SHIPPED_GATEWAY_FILE);
      const mine = await call(gateway.url, '/me', tenant.token, { headers: { origin: registered } });
      expect(mine.status).toBe(200);
      expect(mine.headers.get('access-control-allow-origin')).toBe(registered);
      const other = await call(gateway.url, '/me', tenant.token, { headers: { origin: 'https://elsewhere.example' } });
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await call(gateway.url, '/tenant', undefined, {
        method: 'OPTIONS',
        headers: { origin: registered, 'access-control-request-method': 'GET' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(registered);
      const wrongMethod = await call(gateway.url, '/tenant', undefined, {
        method: 'OPTIONS',
        headers: { origin: registered, 'access-control-request-method': 'DELETE' },
      });
      expect(wrongMethod.status).toBe(404);
    });

    it(
      "lets a suspended tenant's browser app read its 403 " + 'tenant_suspended (CORS decides who reads, the PDP what)',
      async () => {
        const tenant = await tenantWithToken();
        const registered = `https://suspended-${tenant.tenantId.toLowerCase()}.example`;
        await system.db
          .knex('clients')
          .where({ id: tenant.clientId })
          .update({ allowed_origins: JSON.stringify([registered]) });
        await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { status: 'suspended' });
        const gateway = await gatewayFrom(SHIPPED_GATEWAY_FILE);
        const answer = await call(gateway.url, '/me', tenant.token, { headers: { origin: registered } });
        expect([answer.status, (await answer.json()).error]).toEqual([403, 'tenant_suspended']);
        expect(answer.headers.get('access-control-allow-origin')).toBe(registered);
      },
    );

    it(
      "gives a confidential app's registered origin no CORS, " +
        'as the token endpoint does (one rule for browser apps)',
      async () => {
        const tenant = await tenantWithToken();
        const registered = `https://server-side-${tenant.tenantId.toLowerCase()}.example`;
        await system.db
          .knex('clients')
          .where({ id: tenant.clientId })
          .update({ allowed_origins: JSON.stringify([registered]), type: 'confidential' });
        const gateway = await gatewayFrom(SHIPPED_GATEWAY_FILE);
        const answer = await call(gateway.url, '/me', tenant.token, { headers: { origin: registered } });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('access-control-allow-origin')).toBeNull();
        const preflight = await call(gateway.url, '/tenant', undefined, {
          method: 'OPTIONS',
          headers: { origin: registered, 'access-control-request-method': 'GET' },
        });
        expect(preflight.status).toBe(404);
      },
    );
  });

  describe('rate limiting across gateways', () => {
    it('enforces one combined limit for two gateway instances sharing Redis', async () => {
      const tenant = await tenantWithToken();
      const text = withMeLimit(4);
      const [a, b] = await Promise.all([
        gatewayFrom(text, { REDIS_URL: SHARED_REDIS }),
        gatewayFrom(text, { REDIS_URL: SHARED_REDIS }),
      ]);
      const results = await statuses(6, (i) => call((i % 2 ? b : a).url, '/me', tenant.token));
      expect(results).toEqual([200, 200, 200, 200, 429, 429]);
    });
  });

  describe('DPoP proofs across gateways', () => {
    /** Both gateways behind one public address (as behind a load balancer): a proof names that URL in htu. */
    const PUBLIC = 'https://api.example.test';
    const behindOneAddress = editedGatewayFile(
      'config: { iatWindowS: 60 }',
      `config: { iatWindowS: 60, publicBaseUrl: ${PUBLIC} }`,
    );

    async function boundToken() {
      const tenant = await setupTenant(admin);
      const key = await dpopKey();
      const { access_token } = await obtainTokens(
        browser,
        { authUrl: system.authUrl, ...tenant },
        tenant,
        'svc.profile.self.read',
        key,
      );
      const proof = () => makeProof(key, { htm: 'GET', htu: `${PUBLIC}/v1/me`, token: access_token });
      const send = (gateway: Running, dpop: string) =>
        call(gateway.url, '/me', undefined, { headers: { authorization: `DPoP ${access_token}`, dpop } });
      return { proof, send };
    }

    it('refuses on one gateway a proof already used on another that shares Redis', async () => {
      const [a, b] = await Promise.all([
        gatewayFrom(behindOneAddress, { REDIS_URL: SHARED_REDIS }),
        gatewayFrom(behindOneAddress, { REDIS_URL: SHARED_REDIS }),
      ]);
      const { proof, send } = await boundToken();
      const used = await proof();
      expect((await send(a, used)).status).toBe(200);
      const replayed = await send(b, used);
      expect(replayed.status).toBe(401);
      expect(replayed.headers.get('www-authenticate')).toContain('DPoP error="invalid_dpop_proof"');
      // A fresh proof still passes on either: only the replay is refused.
      expect((await send(b, await proof())).status).toBe(200);
      await Promise.all([stop(a), stop(b)]);
    });

    it('keeps refusing replays in process while Redis cannot be reached, and keeps serving fresh proofs', async () => {
      // Nothing listens on port 1: every Redis command fails at once, as in an outage.
      const gateway = await gatewayFrom(behindOneAddress, { REDIS_URL: 'redis://127.0.0.1:1' });
      const { proof, send } = await boundToken();
      const used = await proof();
      expect((await send(gateway, used)).status).toBe(200);
      expect((await send(gateway, used)).status).toBe(401);
      expect((await send(gateway, await proof())).status).toBe(200);
      await stop(gateway);
    });
  });

  describe('flood guard ahead of the PDP', () => {
    // Decisions the PDP made, counted as it answers (its decision log is written later, in batches).
    const decisions = async () => (await system.telemetry.decisions.get()).values.reduce((n, v) => n + v.value, 0);

    it(
      'answers 429 without asking the PDP once a valid token has been denied often, ' +
        'and never counts allowed calls',
      async () => {
        const tenant = await tenantWithToken('svc.profile.self.read');
        const gateway = await gatewayFrom(
          editedGatewayFile('config: { points: 600, durationS: 60 }', 'config: { points: 2, durationS: 60 }'),
        );
        expect(await statuses(4, () => call(gateway.url, '/me', tenant.token))).toEqual([200, 200, 200, 200]);
        expect(await statuses(2, () => call(gateway.url, '/tenant', tenant.token))).toEqual([403, 403]);
        const asked = await decisions();
        const flooded = await call(gateway.url, '/tenant', tenant.token);
        expect(flooded.status).toBe(429);
        expect((await flooded.json()).error).toBe('rate_limited');
        expect(Number(flooded.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(await decisions()).toBe(asked);
      },
    );

    it(
      'blocks a flood counted by another gateway after at most ' +
        'one more PDP decision here, and counts allowed calls nowhere',
      async () => {
        const tenant = await tenantWithToken('svc.profile.self.read');
        const text = editedGatewayFile(
          'config: { points: 600, durationS: 60 }',
          'config: { points: 2, durationS: 60 }',
        );
        const [a, b] = await Promise.all([
          gatewayFrom(text, { REDIS_URL: SHARED_REDIS }),
          gatewayFrom(text, { REDIS_URL: SHARED_REDIS }),
        ]);
        expect(await statuses(3, () => call(b.url, '/me', tenant.token))).toEqual([200, 200, 200]);
        expect(await statuses(2, () => call(a.url, '/tenant', tenant.token))).toEqual([403, 403]);
        expect((await call(a.url, '/tenant', tenant.token)).status).toBe(429);
        // b has not seen a denial of this key: its next one reaches the PDP, is counted (3 of 2) and blocks it there too.
        const before = await decisions();
        expect(await statuses(3, () => call(b.url, '/tenant', tenant.token))).toEqual([403, 429, 429]);
        expect(await decisions()).toBe(before + 1);
        // Only the denied subject's key is blocked: the same token is refused before the PDP on every route.
        expect((await call(b.url, '/me', tenant.token)).status).toBe(429);
      },
    );
  });

  describe('a backend that refuses the call context', () => {
    it(
      "answers 503 authorization_unavailable with retry-after, never the backend's 403, " +
        'when the backend holds another INTERNAL_SECRET, and meters nothing',
      async () => {
        const backend = await listen(0);
        backend.server.on(
          'request',
          createBackendApp({
            knex: system.db.knex,
            internalSecret: 'a-secret-rolled-out-to-the-backend-first-0123',
            log: createLogger('backend', 'silent'),
          }),
        );
        const tenant = await tenantWithToken('svc.profile.self.read');
        try {
          const gateway = await gatewayFrom(SHIPPED_GATEWAY_FILE, {}, backend.url);
          const res = await call(gateway.url, '/me', tenant.token);
          expect({ status: res.status, body: await res.json() }).toEqual({
            status: 503,
            body: {
              error: 'authorization_unavailable',
              message: 'the service is temporarily unavailable',
              requestId: res.headers.get('x-request-id'),
            },
          });
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          await stop(gateway);
          expect(await system.db.knex('usage_records').where({ tenant_id: tenant.tenantId })).toEqual([]);
        } finally {
          await backend.close();
        }
      },
    );
  });

  describe('metering', () => {
    it('records each forwarded request once per (tenant, request id), and flushes when the gateway closes', async () => {
      const tenant = await tenantWithToken('svc.profile.self.read');
      const gateway = await gatewayFrom(SHIPPED_GATEWAY_FILE);
      const retried = { 'x-request-id': `retry-${tenant.tenantId}` };
      expect((await call(gateway.url, '/me', tenant.token, { headers: retried })).status).toBe(200);
      expect((await call(gateway.url, '/me', tenant.token, { headers: retried })).status).toBe(200); // a client retry
      const other = await call(gateway.url, '/me', tenant.token);
      expect((await call(gateway.url, '/tenant', tenant.token)).status).toBe(403); // denied: not forwarded, not metered
      await stop(gateway);
      const rows = await system.db
        .knex('usage_records')
        .where({ tenant_id: tenant.tenantId })
        .orderBy('request_id')
        .select('request_id', 'client_id', 'account_id', 'operation_id', 'status');
      expect(rows).toEqual(
        [retried['x-request-id'], other.headers.get('x-request-id')!].sort().map((request_id) => ({
          request_id,
          client_id: tenant.clientId,
          account_id: tenant.accountId,
          operation_id: 'getMe',
          status: 200,
        })),
      );
    });

    it(
      'meters different calls that reuse one request id as the calls they are, ' + 'and replays past the allowance too',
      async () => {
        const tenant = await tenantWithToken('svc.profile.self.read svc.tenant.info.read');
        const gateway = await gatewayFrom(SHIPPED_GATEWAY_FILE);
        const reused = { 'x-request-id': `reused-${tenant.tenantId}` };
        const replayed = { 'x-request-id': `replayed-${tenant.tenantId}` };
        const answers = [];
        // 50 different requests under one id: paths differ (the query is part of the request).
        for (let i = 0; i < 50; i++)
          answers.push(
            (await call(gateway.url, i % 2 ? `/me?n=${i}` : `/tenant?n=${i}`, tenant.token, { headers: reused }))
              .status,
          );
        // 50 identical requests under another id: the first and the 46 past the three allowed replays are metered.
        for (let i = 0; i < 50; i++)
          answers.push((await call(gateway.url, '/me', tenant.token, { headers: replayed })).status);
        expect(answers.every((s) => s === 200)).toBe(true);
        await stop(gateway);
        const metered: { request_id: string; n: string }[] = await system.db
          .knex('usage_records')
          .where({ tenant_id: tenant.tenantId })
          .groupBy('request_id')
          .select('request_id')
          .count({ n: '*' });
        expect(Object.fromEntries(metered.map((r) => [r.request_id, Number(r.n)]))).toEqual({
          [reused['x-request-id']]: 50,
          [replayed['x-request-id']]: 1 + 50 - 1 - ALLOWED_REPLAYS,
        });
      },
    );
  });

  describe('answers at the edge', () => {
    let gateway: Running;
    let tenant: TenantSetup & { token: string };
    beforeAll(async () => {
      gateway = await gatewayFrom(SHIPPED_GATEWAY_FILE);
      tenant = await tenantWithToken();
    });

    it(
      'challenges a request without credentials with a bare Bearer, ' + 'and a bad token with error="invalid_token"',
      async () => {
        const none = await call(gateway.url, '/me');
        expect(none.status).toBe(401);
        expect(none.headers.get('www-authenticate')).toBe('Bearer');
        expect(await none.json()).toMatchObject({
          error: 'invalid_token',
          message: expect.stringContaining('missing'),
        });
        const malformed = await call(gateway.url, '/me', undefined, { headers: { authorization: 'Bearer not-a-jwt' } });
        expect(malformed.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
        expect(await malformed.json()).toMatchObject({
          error: 'invalid_token',
          message: expect.stringContaining('malformed'),
        });
        const failing = await call(gateway.url, '/me', `${tenant.token.slice(0, -4)}AAAA`);
        expect(failing.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
        expect(await failing.json()).toMatchObject({
          error: 'invalid_token',
          message: 'the access token is not valid',
        });
      },
    );

    it('answers HEAD as GET without a body', async () => {
      const head = await call(gateway.url, '/me', tenant.token, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      expect(head.headers.get('x-request-id')).toBeTruthy();
      expect(Number(head.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      const unauthenticated = await call(gateway.url, '/me', undefined, { method: 'HEAD' });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.headers.get('www-authenticate')).toBe('Bearer');
    });

    it.each([
      [
        'oversized headers',
        `GET /v1/me HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'payload_too_large',
      ],
      ['a malformed request line', 'GARBAGE\r\n\r\n', 400, 'not_found'],
    ])('answers %s with a Problem carrying x-request-id', async (_name, bytes, status, error) => {
      const answer = await rawHttp(gateway.url, bytes);
      expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      const id = rawHeader(answer, 'x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(rawJson(answer)).toEqual({ error, requestId: id });
    });
  });
});
