// The token endpoint's own limit (contract §4.1, §8): tokens issued per client and failed attempts per source address,
// answered 429 with an integer retry-after >= 1 and a TokenError body. Small limits are configured for the test.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { System } from '../../infra/system.js';
import { TOKEN_ERROR_CODES } from '../../wire/codes.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient } from '../support/admin.js';
import { assertResponseMatches, captureResponse } from '../support/openapi.js';

describe('token-rate-limit', () => {
  let system: System;
  let admin: AdminClient;
  beforeAll(async () => {
    system = await startTestSystem({
      ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
      TOKEN_RATE_LIMIT_PER_CLIENT: '3',
      TOKEN_RATE_LIMIT_PER_ADDRESS: '4',
    });
    admin = adminClient(system);
  });
  afterAll(async () => {
    await system?.close();
  });

  const SCOPE = 'svc.profile.self.read';

  async function machineClient() {
    const tenant = await setupTenant(admin, { type: 'confidential' });
    await admin.ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
      clientId: tenant.clientId,
      name: 'sync',
      capabilities: [SCOPE],
    });
    return { clientId: tenant.clientId, secret: tenant.clientSecret!, redirectUri: tenant.redirectUri };
  }

  async function tokenRequest(
    clientId: string,
    secret: string,
    headers: Record<string, string> = {},
    authUrl = system.authUrl,
  ) {
    const res = await fetch(`${authUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
        scope: SCOPE,
      }).toString(),
    });
    const body = assertResponseMatches('token', 'issueToken', await captureResponse(res)) as Record<string, string>;
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
  }

  function expectLimited(r: Awaited<ReturnType<typeof tokenRequest>>) {
    expect(r.status).toBe(429);
    expect(r.retryAfter).toMatch(/^[1-9][0-9]*$/);
    expect(TOKEN_ERROR_CODES).toContain(r.body.error);
    expect(r.body.access_token).toBeUndefined();
  }

  describe('token endpoint rate limit', () => {
    it('refuses a client that has spent its tokens for the window, without touching other clients', async () => {
      const [busy, quiet] = [await machineClient(), await machineClient()];
      for (let i = 0; i < 3; i++) expect((await tokenRequest(busy.clientId, busy.secret)).status).toBe(200);
      expectLimited(await tokenRequest(busy.clientId, busy.secret));
      expect((await tokenRequest(quiet.clientId, quiet.secret)).status).toBe(200);
    });

    it(
      'counts failed attempts against the source address with the client they name, ' +
        "never the client's own budget, then refuses that pair",
      async () => {
        const victim = await machineClient();
        for (let i = 0; i < 3; i++)
          expect((await tokenRequest(victim.clientId, 'wrong-secret-0123456789abcdef')).status).toBe(400);
        // Three failures named the client, yet its own budget is untouched.
        expect((await tokenRequest(victim.clientId, victim.secret)).status).toBe(200);
        expect((await tokenRequest(victim.clientId, 'wrong-secret-0123456789abcdef')).status).toBe(400);
        // The address has now failed four times: even a correct request from it waits.
        expectLimited(await tokenRequest(victim.clientId, victim.secret));
      },
    );

    it('counts failed client authentications at the pushed authorization request endpoint as the token endpoint does', async () => {
      const victim = await machineClient();
      const push = (secret: string) =>
        fetch(`${system.authUrl}/oauth2/par`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_id: victim.clientId,
            client_secret: secret,
            response_type: 'code',
            redirect_uri: victim.redirectUri,
            scope: SCOPE,
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
            code_challenge_method: 'S256',
          }).toString(),
        });
      // A correct push is a success (201), charged to nobody's failures.
      expect((await push(victim.secret)).status).toBe(201);
      for (let i = 0; i < 4; i++) expect((await push('wrong-secret-0123456789abcdef')).status).toBe(401);
      // The address has failed four times at PAR: the token endpoint now refuses it too.
      expectLimited(await tokenRequest(victim.clientId, victim.secret));
      expect((await push(victim.secret)).status).toBe(429);
    });

    it(
      'charges failures naming junk clients to each (address, ' +
        'client) and to the address only up to ten times as many',
      async () => {
        // A fresh address per test: the connecting address is 127.0.0.1 for every test here, so this one trusts one proxy
        // hop.
        const proxied = await startTestSystem({
          ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
          TOKEN_RATE_LIMIT_PER_ADDRESS: '4',
          TRUST_PROXY: '1',
        });
        try {
          const from = (address: string) => ({ 'x-forwarded-for': address });
          const tenant = await setupTenant(adminClient(proxied), { type: 'confidential' });
          await adminClient(proxied).ok('POST', `/tenants/${tenant.tenantId}/service-accounts`, {
            clientId: tenant.clientId,
            name: 'sync',
            capabilities: [SCOPE],
          });
          const junk = (n: number) =>
            tokenRequest(`tp_junk_${n}`, 'wrong-secret-0123456789abcdef', from('203.0.113.7'), proxied.authUrl);
          // 39 failures, each naming another junk client: no (address, client) pair is spent, and the address is under
          // 40.
          for (let n = 0; n < 39; n++) expect((await junk(n)).status).not.toBe(429);
          expect(
            (await tokenRequest(tenant.clientId, tenant.clientSecret!, from('203.0.113.7'), proxied.authUrl)).status,
          ).toBe(200);
          expect((await junk(39)).status).not.toBe(429);
          // The fortieth failure spent the address's own budget (10 x 4): now every request from it waits.
          expectLimited(
            await tokenRequest(tenant.clientId, tenant.clientSecret!, from('203.0.113.7'), proxied.authUrl),
          );
          // Another client address behind the same trusted proxy is not affected.
          expect(
            (await tokenRequest(tenant.clientId, tenant.clientSecret!, from('198.51.100.9'), proxied.authUrl)).status,
          ).toBe(200);
        } finally {
          await proxied.close();
        }
      },
    );

    it(
      'ignores X-Forwarded-For unless TRUST_PROXY says to believe it: ' +
        'rotating it does not escape the address limit',
      async () => {
        const victim = await machineClient();
        for (let i = 0; i < 4; i++)
          await tokenRequest(victim.clientId, 'wrong-secret-0123456789abcdef', { 'x-forwarded-for': `192.0.2.${i}` });
        expectLimited(await tokenRequest(victim.clientId, victim.secret, { 'x-forwarded-for': '192.0.2.200' }));
      },
    );
  });
});
