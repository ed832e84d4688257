// Data ownership (contract §3 last row, §8 rule 2; platform-interfaces.md "Data ownership, accountability and
// consent"): after a plan downgrade the app's extension records stay readable and deletable and writes are 422 with
// nothing stored; and a tenant's records leave as an NDJSON export (admin API, CLI, console) from one snapshot, in
// pages, releasing its database connection when the reader goes away.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { get } from 'node:http';
import express from 'express';
import type { Knex } from 'knex';
import type { Browser } from 'playwright-core';
import * as oidc from 'openid-client';
import type { System } from '../../infra/system.js';
import { main as adminCli } from '../../infra/admin-cli.js';
import { exportRouter, INCOMPLETE_MARK } from '../../policies/admin/export.js';
import { errorHandler, listen, requestId } from '../../common/http.js';
import { createLogger } from '../../common/log.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, createPerson, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { downloadedText, launchBrowser } from '../support/browser.js';
import { discover, obtainTokens } from '../support/oauth.js';
import { PERSON_SCOPES, personApi, registerExtension, type PersonApi } from '../support/extensions.js';
import { expectProblem, problemOf } from '../support/problems.js';
import { assertResponseMatches, captureResponse } from '../support/openapi.js';
import { waitFor } from '../support/processes.js';

describe('data-ownership', () => {
  const CAPABILITIES = [
    'svc.profile.self.read',
    'svc.person.read',
    'svc.person.metadata.read',
    'svc.person.metadata.write',
  ];
  const CREATE = { 'if-none-match': '*' };

  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  let api: PersonApi;
  let knex: Knex;
  let tenant: TenantSetup;
  let extension: string;
  let persons: string[];
  let tokens: { access_token: string; refresh_token?: string | undefined };

  const exported = (tenantId: string, query = '', token = system.adminToken, headers: Record<string, string> = {}) =>
    fetch(`${system.pdpUrl}/admin/v1/tenants/${tenantId}/export${query}`, {
      headers: { authorization: `Bearer ${token}`, ...headers },
    });
  /** The export's lines, held to admin-api.yaml (each line to ExportedRecord). */
  async function exportLines(tenantId: string, query = ''): Promise<Record<string, any>[]> {
    const res = await exported(tenantId, query);
    expect(res.status).toBe(200);
    const text = assertResponseMatches('admin', 'exportRecords', await captureResponse(res)) as string;
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  }
  const recordCount = async (tenantId: string) =>
    Number((await knex('person_extensions').where({ tenant_id: tenantId }).count({ n: '*' }))[0]!.n);

  /** Stores `count` records of `extensionId` (for as many new persons) with one statement each. */
  async function storeRecords(
    t: TenantSetup,
    extensionId: string,
    count: number,
    prefix: string,
    noteBytes = 200,
  ): Promise<void> {
    const id = `'psn_${prefix}' || lpad(g::text, ${26 - prefix.length}, '0')`;
    await knex.raw(
      `insert into persons (id, display_name) select ${id}, 'Bulk ' || g from generate_series(1, ?::int) g`,
      [count],
    );
    await knex.raw(
      `insert into person_extensions (tenant_id, person_id, extension_id, schema_version, data, etag, ` +
        `updated_by, created_at, updated_at)
     select ?, ${id}, ?, 1, jsonb_build_object('note', repeat('x', ?::int) || g), '"bulk-' || g || '"', ` +
        `?, now(), now() from generate_series(1, ?::int) g`,
      [t.tenantId, extensionId, noteBytes, t.clientId, count],
    );
  }

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    admin = adminClient(system);
    api = personApi(system.baseUrl);
    knex = system.db.knex;
    tenant = await setupTenant(admin, { capabilities: CAPABILITIES });
    extension = await registerExtension(admin, tenant.clientId);
    persons = [tenant.personId, await createPerson(admin, tenant.tenantId), await createPerson(admin, tenant.tenantId)];
    tokens = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, PERSON_SCOPES);
    for (const [i, p] of persons.entries())
      expect(
        (await api.put(tokens.access_token, p, extension, { schemaVersion: 1, data: { note: `record ${i}` } }, CREATE))
          .status,
      ).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  describe('after a plan downgrade below the metadata capabilities (L2 to L1)', () => {
    let before: number;
    beforeAll(async () => {
      before = await recordCount(tenant.tenantId);
      await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { plan: 'L1' });
    });
    afterAll(async () => {
      await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { plan: 'L2' });
    });

    it("keeps the app's records readable, one and listed, with the token it already holds", async () => {
      const one = await api.get(tokens.access_token, persons[0]!, extension);
      expect(one.status).toBe(200);
      expect(one.body.data).toEqual({ note: 'record 0' });
      const page = await api.list(tokens.access_token, persons[0]!);
      expect(page.status).toBe(200);
      expect(page.body.items.map((i: { extensionId: string }) => i.extensionId)).toEqual([extension]);
    });

    it('refuses creates and updates with 422 quota_exceeded and stores nothing', async () => {
      const fresh = await createPerson(admin, tenant.tenantId);
      expectProblem(
        await api.put(tokens.access_token, fresh, extension, { schemaVersion: 1, data: { note: 'new' } }, CREATE),
        422,
        'quota_exceeded',
      );
      const held = await api.get(tokens.access_token, persons[1]!, extension);
      const update = await api.put(
        tokens.access_token,
        persons[1]!,
        extension,
        { schemaVersion: 1, data: { note: 'changed' } },
        { 'if-match': held.body.etag },
      );
      expectProblem(update, 422, 'quota_exceeded');
      const after = await api.get(tokens.access_token, persons[1]!, extension);
      expect({ etag: after.body.etag, data: after.body.data }).toEqual({
        etag: held.body.etag,
        data: { note: 'record 1' },
      });
      expect(await recordCount(tenant.tenantId)).toBe(before);
    });

    it('keeps the plan ceiling on the person itself: 403 plan_capability_excluded', async () => {
      expectProblem(await api.getPerson(tokens.access_token, persons[0]!), 403, 'plan_capability_excluded');
    });

    it(
      'issues refreshed tokens that still carry the metadata ' +
        'scopes (not svc.person.read), and they read the records',
      async () => {
        const config = await discover({ authUrl: system.authUrl, ...tenant });
        const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
        expect(refreshed.scope!.split(' ').sort()).toEqual(['svc.person.metadata.read', 'svc.person.metadata.write']);
        tokens = { access_token: refreshed.access_token, refresh_token: refreshed.refresh_token };
        expect((await api.get(tokens.access_token, persons[0]!, extension)).status).toBe(200);
      },
    );

    it(
      'deletes a record (204, its quota unit freed) and nothing else; ' + 'the export still has every other record',
      async () => {
        expect((await api.delete(tokens.access_token, persons[2]!, extension, { 'if-match': '*' })).status).toBe(204);
        expect(problemOf(await api.get(tokens.access_token, persons[2]!, extension))).toEqual({
          status: 404,
          error: 'not_found',
        });
        expect(await recordCount(tenant.tenantId)).toBe(before - 1);
        expect((await exportLines(tenant.tenantId)).map((l) => l.personId).sort()).toEqual(persons.slice(0, 2).sort());
      },
    );

    it('writes again once the plan is back', async () => {
      await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { plan: 'L2' });
      expect(
        (
          await api.put(
            tokens.access_token,
            persons[2]!,
            extension,
            { schemaVersion: 1, data: { note: 'record 2' } },
            CREATE,
          )
        ).status,
      ).toBe(201);
    });
  });

  describe('export', () => {
    it(
      'streams every record of the tenant as NDJSON, ' + 'each line equal to what the API answers for that record',
      async () => {
        const lines = await exportLines(tenant.tenantId);
        expect(lines).toHaveLength(persons.length);
        for (const line of lines) {
          const { body } = await api.get(tokens.access_token, line.personId, line.extensionId);
          expect(line).toEqual({ ...body, clientId: tenant.clientId });
        }
      },
    );

    it('filters by extension and by owning client', async () => {
      const second = await registerExtension(admin, tenant.clientId);
      const other = await admin.ok('POST', `/tenants/${tenant.tenantId}/clients`, {
        slug: 'other',
        name: 'Other',
        kind: 'third_party',
        type: 'public',
        redirectUris: [tenant.redirectUri],
      });
      const foreign = await registerExtension(admin, other.clientId);
      await storeRecords({ ...tenant, clientId: other.clientId }, foreign, 2, 'f');
      await storeRecords(tenant, second, 3, 's');
      expect(await exportLines(tenant.tenantId)).toHaveLength(persons.length + 5);
      expect((await exportLines(tenant.tenantId, `?extensionId=${second}`)).map((l) => l.extensionId)).toEqual([
        second,
        second,
        second,
      ]);
      const ofOther = await exportLines(tenant.tenantId, `?clientId=${other.clientId}`);
      expect(ofOther.map((l) => [l.clientId, l.extensionId])).toEqual([
        [other.clientId, foreign],
        [other.clientId, foreign],
      ]);
      expect(await exportLines(tenant.tenantId, `?clientId=${other.clientId}&extensionId=${second}`)).toEqual([]);
    });

    it('answers gzip to a client that accepts it, with the same lines', async () => {
      const plain = await (await exported(tenant.tenantId)).text();
      const res = await fetch(`${system.pdpUrl}/admin/v1/tenants/${tenant.tenantId}/export`, {
        headers: { authorization: `Bearer ${system.adminToken}`, 'accept-encoding': 'gzip' },
      });
      expect(res.headers.get('content-encoding')).toBe('gzip');
      // fetch inflates on its own; the raw bytes are checked by inflating them again here.
      expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      expect(await res.text()).toBe(plain);
      const raw = await new Promise<Buffer>((resolve, reject) => {
        get(
          `${system.pdpUrl}/admin/v1/tenants/${tenant.tenantId}/export`,
          { headers: { authorization: `Bearer ${system.adminToken}`, 'accept-encoding': 'gzip' } },
          (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c))
              .on('end', () => resolve(Buffer.concat(chunks)))
              .on('error', reject);
          },
        ).on('error', reject);
      });
      expect(gunzipSync(raw).toString('utf8')).toBe(plain);
    });

    it(
      'refuses a filter naming nothing of this tenant, ' +
        'an unlisted or malformed parameter (422), and an unknown tenant (404)',
      async () => {
        const elsewhere = await setupTenant(admin);
        const elsewhereExtension = await registerExtension(admin, elsewhere.clientId);
        for (const query of [
          `?extensionId=${elsewhereExtension}`,
          '?extensionId=no_such_extension',
          `?clientId=${elsewhere.clientId}`,
          '?extensionId=Bad-Id',
          '?limit=5',
          '?clientId=',
        ]) {
          const res = await exported(tenant.tenantId, query);
          expect({ query, ...problemOf({ status: res.status, body: await res.json() }) }).toEqual({
            query,
            status: 422,
            error: 'schema_invalid',
          });
        }
        for (const id of ['ten_00000000000000000000000000', 'not-a-tenant'])
          expect((await exported(id)).status).toBe(404);
      },
    );

    it(
      'lets a tenant admin key export its own tenant and nothing else: ' +
        'another tenant, existing or not, is 403 alike',
      async () => {
        const { key } = await admin.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`);
        const own = await exported(tenant.tenantId, '', key);
        expect(own.status).toBe(200);
        expect((await own.text()).split('\n').filter(Boolean)).toHaveLength(await recordCount(tenant.tenantId));
        const elsewhere = await setupTenant(admin);
        for (const id of [elsewhere.tenantId, 'ten_00000000000000000000000000']) {
          const res = await exported(id, '', key);
          expect(problemOf({ status: res.status, body: await res.json() })).toEqual({
            status: 403,
            error: 'forbidden',
          });
        }
      },
    );

    it('writes nothing: every table is as it was', async () => {
      const counts = async () =>
        (await knex.raw(`select (select count(*) from person_extensions) + (select count(*) from persons) as n`))
          .rows[0].n;
      const before = await counts();
      await exportLines(tenant.tenantId);
      expect(await counts()).toBe(before);
    });
  });

  describe('export of many records', () => {
    let bulk: TenantSetup;
    const BULK = 4500; // several pages
    beforeAll(async () => {
      bulk = await setupTenant(admin, { capabilities: CAPABILITIES });
      await storeRecords(bulk, await registerExtension(admin, bulk.clientId), BULK, 'b');
    });

    it('reads page after page into one complete stream', async () => {
      const lines = await exportLines(bulk.tenantId);
      expect(lines).toHaveLength(BULK);
      expect(new Set(lines.map((l) => l.personId)).size).toBe(BULK);
    });

    it('releases its database connection as soon as the reader goes away mid-stream', async () => {
      // Far more than loopback socket buffers hold (about 40 MB), so the export waits for its reader.
      const big = await setupTenant(admin, { capabilities: CAPABILITIES });
      await storeRecords(big, await registerExtension(admin, big.clientId), 10_000, 'g', 4000);
      const pool = (knex.client as { pool: { numUsed(): number } }).pool;
      const idle = pool.numUsed();
      const reader = (await exported(big.tenantId)).body!.getReader();
      await reader.read();
      // The export is under way and holds its transaction's connection while the reader takes its time.
      await waitFor('the export to wait for its reader', () => pool.numUsed() > idle, 10_000, 20);
      await reader.cancel();
      await waitFor('the export to give its connection back', () => pool.numUsed() <= idle, 10_000, 20);
      // The database answers at once afterwards (the embedded database has one connection: it was not held).
      expect((await exported(tenant.tenantId)).status).toBe(200);
    });

    it('prints the same lines from the command line, with its progress on stderr', async () => {
      const chunks: Buffer[] = [];
      const stdout = new PassThrough().on('data', (c: Buffer) => chunks.push(c));
      const err: string[] = [];
      const env = { ADMIN_URL: `${system.pdpUrl}/admin/v1`, ADMIN_TOKEN: system.adminToken };
      const code = await adminCli(['export', '--tenant', bulk.tenantId], env, {
        out: () => {},
        err: (t) => err.push(t),
        stdout,
      });
      expect(code).toBe(0);
      const text = Buffer.concat(chunks).toString('utf8');
      expect(text).toBe(await (await exported(bulk.tenantId)).text());
      expect(err.at(-1)).toBe(`export: ${BULK.toLocaleString('en')} records`);
      const refused = await adminCli(['export', '--tenant', 'ten_00000000000000000000000000'], env, {
        out: () => {},
        err: (t) => err.push(t),
        stdout,
      });
      expect(refused).toBe(1);
      expect(await adminCli(['export'], env, { out: () => {}, err: (t) => err.push(t), stdout })).toBe(2);
    });
  });

  describe('export when the database fails', () => {
    /** The admin export route over `knex`, whose query number `failAt` (counting from 1) inside the transaction fails. */
    async function exportFailingAt(failAt: number, tenantId: string) {
      const failing = new Proxy(knex, {
        get(target, prop, receiver) {
          if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
          return (run: (trx: Knex.Transaction) => Promise<unknown>, config: Knex.TransactionConfig) => {
            let queries = 0;
            return target.transaction(
              (trx) =>
                run(
                  new Proxy(trx, {
                    apply: (fn, self, args) =>
                      ++queries === failAt
                        ? Reflect.apply(fn, self, ['export_failure_injected'])
                        : Reflect.apply(fn, self, args),
                  }),
                ),
              config,
            );
          };
        },
      });
      const log = createLogger('policies', 'silent');
      const app = express().use(requestId).use('/admin/v1', exportRouter(failing, log)).use(errorHandler(log));
      const server = await listen(0);
      server.server.on('request', app);
      try {
        // node:http hands over every byte that arrived before the connection closed, and says whether the message was
        // complete.
        return await new Promise<{ status: number; contentType: string | undefined; text: string; cut: boolean }>(
          (resolve, reject) => {
            get(`${server.url}/admin/v1/tenants/${tenantId}/export`, (res) => {
              const received: Buffer[] = [];
              res.on('data', (c: Buffer) => received.push(c));
              res.on('close', () =>
                resolve({
                  status: res.statusCode!,
                  contentType: res.headers['content-type'],
                  text: Buffer.concat(received).toString('utf8'),
                  cut: !res.complete,
                }),
              );
            }).on('error', reject);
          },
        );
      } finally {
        await server.close();
      }
    }

    let bulk: TenantSetup;
    beforeAll(async () => {
      bulk = await setupTenant(admin, { capabilities: CAPABILITIES });
      await storeRecords(bulk, await registerExtension(admin, bulk.clientId), 2500, 'c');
    });

    it('answers 503 authorization_unavailable with retry-after when it fails before the first line', async () => {
      const res = await exportFailingAt(1, bulk.tenantId);
      expect(res.status).toBe(503);
      expect(res.contentType).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.text).error).toBe('authorization_unavailable');
    });

    it('ends a stream cut after its first page with an unfinished last line, and the transfer fails', async () => {
      const res = await exportFailingAt(2, bulk.tenantId);
      expect(res.status).toBe(200);
      expect(res.cut).toBe(true);
      const lines = res.text.split('\n');
      expect(lines.at(-1)).toBe(INCOMPLETE_MARK);
      expect(() => JSON.parse(lines.at(-1)!)).toThrow();
      expect(lines.slice(0, -1).every((l) => JSON.parse(l).personId)).toBe(true);
      expect(lines).toHaveLength(1000 + 1);
    });
  });

  describe('export in the admin console', () => {
    it('offers the tenant records as a download, the same file as the API', async () => {
      const { key } = await admin.ok('POST', `/tenants/${tenant.tenantId}/admin-keys`);
      const context = await browser.newContext({ acceptDownloads: true });
      try {
        const page = await context.newPage();
        await page.goto(`${system.pdpUrl}/admin/console/sign-in`);
        await page.getByLabel('Admin key or operator token').fill(key);
        await Promise.all([
          page.waitForNavigation(),
          page.getByRole('button', { name: 'Sign in', exact: true }).click(),
        ]);
        await page.getByRole('link', { name: 'Export', exact: true }).click();
        await page.getByLabel('Extension').selectOption(extension);
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download records' }).click(),
        ]);
        expect(download.suggestedFilename()).toMatch(/-records\.ndjson$/);
        expect(await downloadedText(download)).toBe(
          await (await exported(tenant.tenantId, `?extensionId=${extension}`)).text(),
        );
      } finally {
        await context.close();
      }
    });
  });
});
