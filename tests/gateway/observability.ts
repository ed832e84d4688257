// What operators see of a real session: one JSON log line per request on every service with the fields they search
// by, and none of the credentials the session used; and the operational metrics, each moving when its event happens.
// One system, logs captured at info level, a full consent flow in Chromium, then an API session, admin calls and the
// limits being hit.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import * as oidc from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import knexFactory from 'knex';
import { createLogger } from '../../common/log.js';
import { createTelemetry, type Telemetry } from '../../common/telemetry.js';
import { usageMeter } from '../../gateway/plugins/metering/usage-meter.js';
import { batchedDecisionLog } from '../../policies/decision-log.js';
import { DECISION_BATCH_PATH } from '../../wire/decision.js';
import { startTestSystem } from '../support/system.js';
import { editedGatewayFile, gatewayFileDirectory, SHIPPED_GATEWAY_FILE } from '../support/gateway-files.js';
import { launchBrowser } from '../support/browser.js';
import { adminClient, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { authorizationRequest, discover, signInAndConsent } from '../support/oauth.js';
import { personApi, registerExtension, PERSON_SCOPES } from '../support/extensions.js';

describe('observability', () => {
  const INTERNAL_SECRET = 'observability-test-internal-secret-0123456789';
  const ADMIN_TOKEN = 'observability-test-operator-token-0123456789';
  const SCOPES = `svc.profile.self.read svc.tenant.info.read ${PERSON_SCOPES}`;

  const files = gatewayFileDirectory('observability');

  /** The shipped gateway file with small windows: the flood guard and one route per API limit layer. */
  function gatewayFileWithSmallLimits(): string {
    const route = (id: string, path: string, capability: string, resource: string) =>
      `  - { operationId: ${id}, method: GET, path: ${path}, capability: ` +
      `${capability}, resource: ${resource}, upstream: backend }`;
    const limited = [
      ['config: { points: 600, durationS: 60 }', 'config: { points: 2, durationS: 60 }'],
      [
        route('getMe', '/me', 'svc.profile.self.read', 'self'),
        `${route('getMe', '/me', 'svc.profile.self.read', 'self').slice(0, -2)}, ` +
          `plugins: { rate-limit: { tenant: { points: 3, durationS: 60 } } } }`,
      ],
      [
        route('getTenant', '/tenant', 'svc.tenant.info.read', 'tenant'),
        `${route('getTenant', '/tenant', 'svc.tenant.info.read', 'tenant').slice(0, -2)}, ` +
          `plugins: { rate-limit: { account: { points: 3, durationS: 60 } } } }`,
      ],
    ] as const;
    return files.write(limited.reduce((text, [from, to]) => editedGatewayFile(from, to, text), SHIPPED_GATEWAY_FILE));
  }

  const lines: string[] = [];
  /** Every credential the session used, by what it is. */
  const secrets = new Map<string, string>();
  const keep = (what: string, value: string | undefined) => {
    expect(value?.length).toBeGreaterThanOrEqual(8); // short strings would match by accident
    secrets.set(what, value!);
  };

  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  let tenant: TenantSetup & { clientSecret: string };

  beforeAll(async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const signingKey = { ...(await exportJWK(privateKey)), kid: 'observability-key', alg: 'ES256', use: 'sig' };
    keep('signing key (d)', signingKey.d);
    keep('internal secret', INTERNAL_SECRET);
    keep('admin token', ADMIN_TOKEN);
    [system, browser] = await Promise.all([
      startTestSystem(
        {
          LOG_LEVEL: 'info',
          INTERNAL_SECRET,
          ADMIN_TOKEN,
          ISSUER_JWKS: JSON.stringify({ keys: [signingKey] }),
          ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
          TOKEN_RATE_LIMIT_PER_ADDRESS: '3',
          GATEWAY_CONFIG: gatewayFileWithSmallLimits(),
        },
        {},
        { logDestination: { write: (line: string) => void lines.push(line) } },
      ),
      launchBrowser(),
    ]);
    admin = adminClient(system);
    tenant = (await setupTenant(admin, { type: 'confidential', capabilities: SCOPES.split(' ') })) as typeof tenant;
    keep('person password', tenant.password);
    keep('client secret', tenant.clientSecret);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
    files.remove();
  });

  /** Sends until the answer is 429 (at most 6 times; fails otherwise) and returns the statuses. */
  async function untilRefused(send: () => Promise<Response>): Promise<number[]> {
    const out: number[] = [];
    while (out.at(-1) !== 429) {
      expect(out.length).toBeLessThan(6);
      const res = await send();
      await res.body?.cancel();
      out.push(res.status);
    }
    return out;
  }

  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const values = (await system.telemetry.registry.getSingleMetric(name)!.get()).values;
    return values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((sum, v) => sum + v.value, 0);
  };

  describe('a full session', () => {
    it('moves the operational metrics, logs every request with its fields, and logs no credential it used', async () => {
      // Admin calls: a tenant admin key, a person created with a password by it, a rotated client secret.
      const key = (await admin.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`)).key as string;
      keep('tenant admin key', key);
      const keyAdmin = adminClient(system, key);
      const secondPassword = 'another correct horse battery';
      keep('second person password', secondPassword);
      await keyAdmin.ok('POST', `/tenants/${tenant.tenantId}/persons`, {
        displayName: 'Second',
        username: `second-${tenant.tenantId}`,
        password: secondPassword,
      });
      const extension = await registerExtension(admin, tenant.clientId);

      // The consent flow in Chromium, the code exchanged by a confidential client.
      const app = { authUrl: system.authUrl, ...tenant };
      const config = await discover(app);
      const request = await authorizationRequest(config, tenant.redirectUri, SCOPES);
      const callback = await signInAndConsent(browser, request.url, tenant);
      keep('authorization code', callback.searchParams.get('code') ?? undefined);
      const issued = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
      });
      keep('access token', issued.access_token);
      keep('refresh token', issued.refresh_token);
      // No ID token exists to look for: the issuer refuses `openid` (OAuth only, docs/decisions.md).
      expect(issued.id_token).toBeUndefined();

      // The API session: reads, ETag-guarded writes, a refresh.
      const api = personApi(system.baseUrl);
      expect((await api.getPerson(issued.access_token, tenant.personId)).status).toBe(200);
      const created = await api.put(
        issued.access_token,
        tenant.personId,
        extension,
        { schemaVersion: 1, data: { note: 'first' } },
        { 'if-none-match': '*' },
      );
      expect(created.status).toBe(201);
      const read = await api.get(issued.access_token, tenant.personId, extension);
      const updated = await api.put(
        issued.access_token,
        tenant.personId,
        extension,
        { schemaVersion: 1, data: { note: 'second' } },
        { 'if-match': read.headers.get('etag')! },
      );
      expect(updated.status).toBe(200);
      const refreshed = await oidc.refreshTokenGrant(config, issued.refresh_token!);
      keep('refreshed access token', refreshed.access_token);
      keep('rotated refresh token', refreshed.refresh_token);
      expect((await api.list(refreshed.access_token, tenant.personId)).status).toBe(200);

      // The limits: tenant layer (GET /me), account layer (GET /tenant), three allowed each, the fourth refused.
      const statuses = async (path: string, token: string, n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++)
          out.push((await fetch(`${system.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })).status);
        return out;
      };
      expect(await statuses('/me', refreshed.access_token, 4)).toEqual([200, 200, 200, 429]);
      expect(await statuses('/tenant', refreshed.access_token, 4)).toEqual([200, 200, 200, 429]);
      expect(await metric('rate_limit_rejections_total', { layer: 'tenant' })).toBe(1);
      expect(await metric('rate_limit_rejections_total', { layer: 'account' })).toBe(1);

      // Machine mode: client_credentials with the secret, then a rotation and the next secret.
      await admin.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
        clientId: tenant.clientId,
        name: 'sync',
        capabilities: ['svc.tenant.info.read'],
      });
      const workload = await oidc.clientCredentialsGrant(config, { scope: 'svc.tenant.info.read' });
      keep('workload access token', workload.access_token);
      const rotated = (await keyAdmin.ok('POST', `/clients/${tenant.clientId}/secrets`)).clientSecret as string;
      keep('rotated client secret', rotated);
      const nextConfig = await discover({ ...app, clientSecret: rotated });
      keep(
        'second workload access token',
        (await oidc.clientCredentialsGrant(nextConfig, { scope: 'svc.tenant.info.read' })).access_token,
      );

      // The flood guard: a valid workload token the PDP keeps denying (no svc.person.read) is refused after two denials
      // (each counted as its answer finishes, so the refusal may come one call later).
      const denied = await untilRefused(() =>
        fetch(`${system.baseUrl}/persons/${tenant.personId}`, {
          headers: { authorization: `Bearer ${workload.access_token}` },
        }),
      );
      expect(denied.slice(0, 2)).toEqual([403, 403]);
      expect(await metric('rate_limit_rejections_total', { layer: 'flood_guard' })).toBe(1);

      expect(await metric('tokens_issued_total', { grant_type: 'authorization_code' })).toBe(1);
      expect(await metric('tokens_issued_total', { grant_type: 'refresh_token' })).toBe(1);
      expect(await metric('tokens_issued_total', { grant_type: 'client_credentials' })).toBe(2);

      // Reuse detection: the first refresh token again ends the family.
      expect(await metric('token_family_kills_total')).toBe(0);
      await expect(oidc.refreshTokenGrant(config, issued.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
      expect(await metric('token_family_kills_total', { reused: 'refresh_token' })).toBe(1);

      // The token endpoint's limit: failed attempts from this address (the replay above was one) until it refuses.
      await untilRefused(() =>
        fetch(`${system.authUrl}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: 'not-a-refresh-token',
            client_id: tenant.clientId,
          }).toString(),
        }),
      );
      expect(await metric('rate_limit_rejections_total', { layer: 'token_endpoint' })).toBe(1);

      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const requests = records.filter((r) => r.msg === 'request');
      for (const r of requests)
        expect(Object.keys(r)).toEqual(
          expect.arrayContaining(['requestId', 'tenant', 'client', 'method', 'route', 'status', 'durationMs']),
        );
      expect(new Set(requests.map((r) => r.service))).toEqual(new Set(['issuer', 'policies', 'backend', 'gateway']));
      expect(requests.every((r) => typeof r.requestId === 'string' && typeof r.durationMs === 'number')).toBe(true);
      // Who the call was for, on each hop of an authenticated API call and on the admin calls.
      const ofRoute = (service: string, route: string) =>
        requests.filter((r) => r.service === service && r.route === route);
      for (const [service, route] of [
        ['gateway', '/v1/persons/:personId/extensions/:extensionId'],
        ['backend', '/v1/persons/:personId/extensions/:extensionId'],
        ['policies', DECISION_BATCH_PATH],
      ])
        expect(ofRoute(service!, route!).map((r) => [r.tenant, r.client])).toContainEqual([
          tenant.tenantId,
          tenant.clientId,
        ]);
      expect(ofRoute('policies', '/admin/v1/clients/:clientId/secrets').map((r) => r.tenant)).toEqual([
        tenant.tenantId,
      ]);
      expect(ofRoute('issuer', '/interaction/:uid').map((r) => [r.tenant, r.client])).toContainEqual([
        tenant.tenantId,
        tenant.clientId,
      ]);
      expect(requests.filter((r) => r.service === 'issuer' && r.client === tenant.clientId).length).toBeGreaterThan(0);

      const hits = [...secrets].flatMap(([what, value]) =>
        lines
          .filter((line) => line.includes(value) || line.includes(encodeURIComponent(value)))
          .map((line) => `${what}: ${line}`),
      );
      expect(hits).toEqual([]);
      expect(lines.length).toBeGreaterThan(40);
    });
  });

  describe('route labels', () => {
    const routes = async () =>
      new Set(
        (await system.telemetry.registry.getSingleMetric('http_requests_total')!.get()).values.map(
          (v) => `${v.labels.service} ${v.labels.method} ${v.labels.route}`,
        ),
      );

    it('are route templates: 100 new tenants, each shown in the console, add no series', async () => {
      // The operator signed in to the console (its sign-in form's cookie and token, then the session cookie).
      const consoleUrl = `${system.pdpUrl}/admin/console`;
      const form = await fetch(`${consoleUrl}/sign-in`);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
      const signedIn = await fetch(`${consoleUrl}/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: form.headers.get('set-cookie')!.split(';')[0]! },
        body: new URLSearchParams({ _csrf: csrf, key: ADMIN_TOKEN }),
      });
      const session = signedIn.headers
        .getSetCookie()
        .find((c) => c.startsWith('console_session='))!
        .split(';')[0]!;
      const showTenant = async () => {
        const { tenantId } = await admin.ok('POST', '/tenants', {
          label: `series${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
          displayName: 'Series',
          plan: 'L1',
        });
        expect(
          (await fetch(`${consoleUrl}/tenants/${tenantId}/apps`, { headers: { cookie: session }, redirect: 'manual' }))
            .status,
        ).toBe(200);
      };
      await showTenant();
      const before = await routes();
      for (let i = 0; i < 100; i++) await showTenant();
      expect([...(await routes())].filter((r) => !before.has(r))).toEqual([]);
      expect(before).toContain('policies GET /admin/console/tenants/:tenantId/apps');
    });

    it('name the issuer\'s own routes (discovery, key set, authorize) instead of "unmatched"', async () => {
      await fetch(`${system.authUrl}/.well-known/openid-configuration`);
      await fetch(`${system.authUrl}/.well-known/jwks.json`);
      await fetch(`${system.authUrl}/oauth2/authorize?client_id=${tenant.clientId}`, { redirect: 'manual' });
      const issuer = [...(await routes())].filter((r) => r.startsWith('issuer GET'));
      expect(issuer).toEqual(
        expect.arrayContaining([
          'issuer GET /.well-known/openid-configuration',
          'issuer GET /.well-known/jwks.json',
          'issuer GET /oauth2/authorize',
        ]),
      );
    });
  });

  describe('dependency and backlog metrics', () => {
    const telemetry = (): Telemetry => createTelemetry();
    const value = async (t: Telemetry, name: string, labels: Record<string, string>) =>
      (await t.registry.getSingleMetric(name)!.get()).values.find((v) =>
        Object.entries(labels).every(([k, l]) => v.labels[k] === l),
      )?.value ?? 0;

    it('counts database connections that cannot be made', async () => {
      const t = telemetry();
      // A pool of its own (openDatabase would refuse the address at once, naming DATABASE_URL).
      const knex = knexFactory({
        client: 'pg',
        connection: 'postgres://postgres@127.0.0.1:1/none',
        pool: { min: 0, max: 1 },
        acquireConnectionTimeout: 2000,
      });
      t.watchDatabase(knex);
      await expect(knex.raw('select 1')).rejects.toThrow();
      await knex.destroy();
      expect(await value(t, 'database_pool_errors_total', { event: 'create' })).toBeGreaterThanOrEqual(1);
      expect(await value(t, 'database_pool_errors_total', { event: 'acquire' })).toBeGreaterThanOrEqual(1);
    });

    it('exports the metering and decision-log rows not yet written, and zero once flushed', async () => {
      const t = telemetry();
      const log = createLogger('test', 'silent');
      const meter = usageMeter(system.db.knex, undefined, { batchSize: 100, flushIntervalMs: 60_000 }, log);
      const decisions = batchedDecisionLog(system.db.knex, log);
      t.addBacklog('metering', meter.pending);
      t.addBacklog('decision_log', decisions.pending);
      for (const n of [1, 2, 3]) {
        const call = {
          tenantId: tenant.tenantId,
          requestId: `backlog-${n}-${Date.now()}`,
          requestIdFromCaller: true,
          clientId: tenant.clientId,
          subject: tenant.personId,
          method: 'GET',
          path: '/v1/me',
          body: undefined,
        };
        await meter.meter(call, {
          client_id: tenant.clientId,
          account_id: tenant.accountId,
          operation_id: 'getMe',
          status: 200,
        });
      }
      decisions.record({
        request_id: `backlog-${Date.now()}`,
        tenant_id: tenant.tenantId,
        client_id: tenant.clientId,
        subject: tenant.personId,
        capability: 'svc.profile.self.read',
        allow: true,
        code: null,
        check_name: 'allow',
      });
      // Read at once (the gauge asks the batches when scraped), before any timer could flush them.
      const scraped = t.registry.getSingleMetric('batch_backlog')!.get();
      expect((await scraped).values.map((v) => [v.labels.batch, v.value])).toEqual([
        ['metering', 3],
        ['decision_log', 1],
      ]);
      await Promise.all([meter.close(), decisions.close()]);
      expect(await value(t, 'batch_backlog', { batch: 'metering' })).toBe(0);
      expect(await value(t, 'batch_backlog', { batch: 'decision_log' })).toBe(0);
    });
  });
});
