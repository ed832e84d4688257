// CORS on the token endpoint for browser apps: preflight and response headers only for an origin registered in a
// public client's allowedOrigins, never a wildcard and never credentials.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type AdminClient } from '../support/admin.js';
import { postTokenForm } from '../support/oauth.js';

describe('token-cors', () => {
  const APP_ORIGIN = 'https://notes.example';
  let system: System;
  let admin: AdminClient;
  let browserAppId: string;
  let serverAppId: string;

  beforeAll(async () => {
    system = await startTestSystem();
    admin = adminClient(system);
    const { tenantId, clientId } = await setupTenant(admin);
    serverAppId = clientId;
    const app = await admin.ok('POST', `/tenants/${tenantId}/clients`, {
      slug: 'browser',
      name: 'Browser',
      kind: 'third_party',
      type: 'public',
      redirectUris: [`${APP_ORIGIN}/cb`],
      allowedOrigins: [APP_ORIGIN],
    });
    browserAppId = app.clientId;
  });
  afterAll(async () => {
    await system?.close();
  });

  const preflight = (origin: string) =>
    fetch(`${system.authUrl}/oauth2/token`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });

  async function refresh(clientId: string, origin?: string) {
    const res = await postTokenForm(
      system.authUrl,
      { grant_type: 'refresh_token', client_id: clientId, refresh_token: 'no-such-token' },
      origin ? { origin } : {},
    );
    return { res, body: res.body as { error: string } };
  }

  const corsHeaders = (res: { headers: Headers }) =>
    [...res.headers.keys()].filter((k) => k.startsWith('access-control-'));

  describe('token endpoint CORS', () => {
    it('answers a preflight from a registered origin for that origin only, without credentials', async () => {
      const res = await preflight(APP_ORIGIN);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(res.headers.get('access-control-allow-methods')).toBe('POST');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('vary')).toMatch(/origin/i);
    });

    it('gives a preflight from any other origin no CORS headers', async () => {
      const res = await preflight('https://evil.example');
      expect(corsHeaders(res)).toEqual([]);
    });

    it('lets the browser app read its token answers (errors included) from its origin', async () => {
      const { res, body } = await refresh(browserAppId, APP_ORIGIN);
      expect(body.error).toBe('invalid_grant');
      expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it.each([
      ['another origin naming the browser app', () => browserAppId, 'https://evil.example'],
      ['the registered origin naming a client that did not register it', () => serverAppId, APP_ORIGIN],
      ['no origin at all (never a wildcard)', () => browserAppId, undefined],
    ])('sends no CORS headers for %s', async (_name, clientId, origin) => {
      const { res } = await refresh(clientId(), origin);
      expect(res.status).toBe(400);
      expect(corsHeaders(res)).toEqual([]);
    });

    it("stops answering a disabled browser app's origin", async () => {
      await admin.ok('PATCH', `/clients/${browserAppId}`, { status: 'disabled' });
      try {
        expect(corsHeaders(await preflight(APP_ORIGIN))).toEqual([]);
      } finally {
        await admin.ok('PATCH', `/clients/${browserAppId}`, { status: 'active' });
      }
    });
  });
});
