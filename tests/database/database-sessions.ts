// The system keeps answering after the pool closes idle connections and after a connection is lost under it. Each
// new connection must start from a clean session: embedded PGlite serves every connection from ONE shared session
// (a named prepared statement from the last connection would collide), real PostgreSQL starts a new backend.
// Runs on whichever database the suite is given (CI runs it on both).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import * as oidc from 'openid-client';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, setupTenant, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { discover, obtainTokens } from '../support/oauth.js';
import { callApi } from '../support/api.js';
import { waitFor } from '../support/processes.js';

describe('database-sessions', () => {
  interface PgConnection {
    processID: number;
    connection: { stream: { destroy(): void } };
    once(event: 'end', listener: () => void): void;
  }
  interface KnexPoolClient {
    pool: { numUsed(): number; numFree(): number };
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: PgConnection): Promise<void>;
  }

  const IDLE_TIMEOUT_MS = 200;
  let system: System;
  let browser: Browser;
  let tenant: TenantSetup;
  let refreshToken: string;
  let accessToken: string;

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem({}, { idleTimeoutMs: IDLE_TIMEOUT_MS }), launchBrowser()]);
    tenant = await setupTenant(adminClient(system));
    const tokens = await obtainTokens(
      browser,
      { authUrl: system.authUrl, clientId: tenant.clientId, redirectUri: tenant.redirectUri },
      tenant,
      'svc.profile.self.read svc.tenant.info.read',
    );
    accessToken = tokens.access_token;
    refreshToken = tokens.refresh_token!;
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  const pooled = () => system.db.knex.client as unknown as KnexPoolClient;

  /**
   * A /v1/me and a /v1/tenant call (token check, PDP decision, backend read) and a refresh (issuer storage) all answer
   * 200.
   */
  async function expectServing() {
    for (const [operationId, path] of [
      ['getMe', '/me'],
      ['getTenant', '/tenant'],
      ['getMe', '/me'],
    ] as const)
      expect((await callApi(system.baseUrl, operationId, path, accessToken)).status).toBe(200);
    const config = await discover({
      authUrl: system.authUrl,
      clientId: tenant.clientId,
      redirectUri: tenant.redirectUri,
    });
    const refreshed = await oidc.refreshTokenGrant(config, refreshToken);
    refreshToken = refreshed.refresh_token!;
    accessToken = refreshed.access_token;
  }

  describe('database connections come and go; the API keeps answering', () => {
    it('after the pool has closed every idle connection', async () => {
      await expectServing();
      await waitFor(
        'the pool to close its idle connections',
        () => pooled().pool.numUsed() + pooled().pool.numFree() === 0,
        6_000,
        20,
      );
      await expectServing();
      await waitFor(
        'the pool to close its idle connections again',
        () => pooled().pool.numUsed() + pooled().pool.numFree() === 0,
        6_000,
        20,
      );
      await expectServing();
    });

    it(
      `after a pooled connection is lost ` +
        `(${process.env.DATABASE_URL ? 'PostgreSQL terminates its backend' : 'its socket is cut'})`,
      async () => {
        await expectServing();
        const connection = await pooled().acquireConnection();
        const ended = new Promise<void>((resolve) => connection.once('end', resolve));
        if (system.db.embedded) connection.connection.stream.destroy();
        // Another pooled connection asks the server to end this one, as a restart or an operator would.
        else await system.db.knex.raw('select pg_terminate_backend(?)', [connection.processID]);
        await pooled().releaseConnection(connection);
        await ended;
        await expectServing();
      },
    );
  });
});
