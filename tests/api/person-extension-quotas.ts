// Contract §8 quotas through the gateway and the admin API: records per tenant per extension and extensions per
// tenant, configurable per plan. The races are meaningful on real PostgreSQL (DATABASE_URL); the embedded database
// serialises everything. This suite gives the tenant its own small plans so the limits are reachable.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { Knex } from 'knex';
import type { System } from '../../infra/system.js';
import { startTestSystem } from '../support/system.js';
import { adminClient, createPerson, setupTenant, type AdminClient, type TenantSetup } from '../support/admin.js';
import { problemOf } from '../support/problems.js';
import { launchBrowser } from '../support/browser.js';
import { obtainTokens } from '../support/oauth.js';
import { PERSON_SCOPES, personApi, registerExtension, OPEN_SCHEMA, type PersonApi } from '../support/extensions.js';

describe('person-extension-quotas', () => {
  let system: System;
  let browser: Browser;
  let admin: AdminClient;
  let api: PersonApi;
  let knex: Knex;
  let tenant: TenantSetup;
  let token: string;

  const RECORD_LIMIT = 5;
  const EXTENSION_LIMIT = 3;
  const CREATE = { 'if-none-match': '*' };

  const setPlan = (plan: string) => knex('tenants').where({ id: tenant.tenantId }).update({ plan });
  const storedRecords = async (extensionId: string) =>
    Number(
      (
        await knex('person_extensions')
          .where({ tenant_id: tenant.tenantId, extension_id: extensionId })
          .count({ n: '*' })
      )[0]!.n,
    );
  const statuses = (answers: { status: number; body: any }[]) =>
    answers.map((r) => `${r.status}${r.body?.error ? ` ${r.body.error}` : ''}`).sort();

  async function newPersons(n: number): Promise<string[]> {
    const created = [];
    for (let i = 0; i < n; i++) created.push(await createPerson(admin, tenant.tenantId));
    return created;
  }

  beforeAll(async () => {
    [system, browser] = await Promise.all([startTestSystem(), launchBrowser()]);
    admin = adminClient(system);
    api = personApi(system.baseUrl);
    knex = system.db.knex;
    tenant = await setupTenant(admin, {
      capabilities: ['svc.person.read', 'svc.person.metadata.read', 'svc.person.metadata.write'],
    });
    await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
      rateLimit: { tenant: { points: 100_000, durationS: 60 }, account: { points: 100_000, durationS: 60 } },
    });
    await knex('plans').insert([
      {
        id: 'Q5',
        level: 3,
        name: 'Quota test',
        max_records_per_extension: RECORD_LIMIT,
        max_extensions: EXTENSION_LIMIT,
      },
      { id: 'Q2', level: 4, name: 'Quota test, downgraded', max_records_per_extension: 2, max_extensions: 1 },
    ]);
    await setPlan('Q5');
    token = (await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, PERSON_SCOPES)).access_token;
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  describe('quotas per plan', () => {
    it('gives the contract plans 50,000 records per extension and 20 extensions per tenant', async () => {
      const plans = await knex('plans')
        .whereIn('id', ['L1', 'L2'])
        .select('max_records_per_extension', 'max_extensions');
      expect(plans).toEqual([
        { max_records_per_extension: 50_000, max_extensions: 20 },
        { max_records_per_extension: 50_000, max_extensions: 20 },
      ]);
    });

    describe('records per tenant per extension', () => {
      let extension: string;
      let persons: string[];
      beforeAll(async () => {
        extension = await registerExtension(admin, tenant.clientId);
        persons = await newPersons(14);
      });

      it(
        'lets concurrent creates at the limit take exactly the remaining quota; ' + 'the rest get 422 quota_exceeded',
        async () => {
          const answers = await Promise.all(
            persons.slice(0, 12).map((p) => api.put(token, p, extension, { schemaVersion: 1, data: {} }, CREATE)),
          );
          expect(statuses(answers)).toEqual([
            ...Array(RECORD_LIMIT).fill('201'),
            ...Array(12 - RECORD_LIMIT).fill('422 quota_exceeded'),
          ]);
          expect(await storedRecords(extension)).toBe(RECORD_LIMIT);
        },
      );

      it(
        'refuses every write at the limit (creates and updates: 422 quota_exceeded, ' +
          'records unchanged), keeps reads and deletes working, and a delete frees quota at once',
        async () => {
          const [held, other] = await knex('person_extensions')
            .where({ extension_id: extension })
            .orderBy('person_id')
            .select('person_id', 'etag');
          const free = persons[13]!;
          expect((await api.get(token, held.person_id, extension)).status).toBe(200);
          expect((await api.list(token, held.person_id)).body.items).toHaveLength(1);
          const update = await api.put(
            token,
            held.person_id,
            extension,
            { schemaVersion: 1, data: { note: 'updated at the limit' } },
            { 'if-match': held.etag },
          );
          expect(problemOf(update)).toEqual({ status: 422, error: 'quota_exceeded' });
          expect((await api.get(token, held.person_id, extension)).headers.get('etag')).toBe(held.etag);
          // A stale ETag is still a conflict and an absent record still 404: the quota answers only a write that could
          // happen.
          expect(
            problemOf(
              await api.put(
                token,
                held.person_id,
                extension,
                { schemaVersion: 1, data: {} },
                { 'if-match': '"stale"' },
              ),
            ),
          ).toEqual({ status: 409, error: 'revision_conflict' });
          expect(
            problemOf(await api.put(token, free, extension, { schemaVersion: 1, data: {} }, { 'if-match': held.etag })),
          ).toEqual({ status: 404, error: 'not_found' });
          const refused = await api.put(token, free, extension, { schemaVersion: 1, data: {} }, CREATE);
          expect(problemOf(refused)).toEqual({ status: 422, error: 'quota_exceeded' });
          expect((await api.delete(token, held.person_id, extension, { 'if-match': '*' })).status).toBe(204);
          // Under the limit again: updates and creates go through.
          expect(
            (
              await api.put(
                token,
                other.person_id,
                extension,
                { schemaVersion: 1, data: { note: 'updated under the limit' } },
                { 'if-match': other.etag },
              )
            ).status,
          ).toBe(200);
          expect((await api.put(token, free, extension, { schemaVersion: 1, data: {} }, CREATE)).status).toBe(201);
          expect((await api.put(token, held.person_id, extension, { schemaVersion: 1, data: {} }, CREATE)).status).toBe(
            422,
          );
          expect(await storedRecords(extension)).toBe(RECORD_LIMIT);
        },
      );

      it(
        'deletes nothing on a plan downgrade: records stay readable ' +
          'and deletable, writes wait until under the new limit',
        async () => {
          await setPlan('Q2');
          try {
            const held = await knex('person_extensions')
              .where({ extension_id: extension })
              .orderBy('person_id')
              .select('person_id');
            expect(held).toHaveLength(RECORD_LIMIT);
            for (const { person_id } of held) expect((await api.get(token, person_id, extension)).status).toBe(200);
            const outside = persons.find((p) => !held.some((h) => h.person_id === p))!;
            const create = () => api.put(token, outside, extension, { schemaVersion: 1, data: {} }, CREATE);
            expect((await create()).body.error).toBe('quota_exceeded');
            const [last] = await knex('person_extensions')
              .where({ extension_id: extension, person_id: held[RECORD_LIMIT - 1]!.person_id })
              .select('etag');
            const updateLast = () =>
              api.put(
                token,
                held[RECORD_LIMIT - 1]!.person_id,
                extension,
                { schemaVersion: 1, data: {} },
                { 'if-match': last.etag },
              );
            expect((await updateLast()).body.error).toBe('quota_exceeded');
            for (const { person_id } of held.slice(0, RECORD_LIMIT - 2))
              expect((await api.delete(token, person_id, extension, { 'if-match': '*' })).status).toBe(204);
            expect((await create()).body.error).toBe('quota_exceeded'); // 2 records at a limit of 2
            expect(
              (await api.delete(token, held[RECORD_LIMIT - 1]!.person_id, extension, { 'if-match': '*' })).status,
            ).toBe(204);
            expect((await create()).status).toBe(201);
          } finally {
            await setPlan('Q5');
          }
        },
      );
    });

    describe('extensions per tenant', () => {
      it(
        'lets concurrent registrations at the limit take exactly ' +
          'the remaining count; the rest get 422 quota_exceeded',
        async () => {
          const registered = Number(
            (await knex('extensions').where({ tenant_id: tenant.tenantId }).count({ n: '*' }))[0]!.n,
          );
          expect(registered).toBeLessThan(EXTENSION_LIMIT);
          const answers = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              admin.checked('createExtension', 'POST', `/clients/${tenant.clientId}/extensions`, {
                name: `race ${i}`,
                schemas: { 1: OPEN_SCHEMA },
              }),
            ),
          );
          const room = EXTENSION_LIMIT - registered;
          expect(statuses(answers)).toEqual([
            ...Array(room).fill('201'),
            ...Array(8 - room).fill('422 quota_exceeded'),
          ]);
          expect(Number((await knex('extensions').where({ tenant_id: tenant.tenantId }).count({ n: '*' }))[0]!.n)).toBe(
            EXTENSION_LIMIT,
          );
        },
      );

      it('keeps registered extensions usable after a downgrade below their number, and refuses new ones', async () => {
        await setPlan('Q2');
        try {
          const fresh = problemOf(
            await admin.checked('createExtension', 'POST', `/clients/${tenant.clientId}/extensions`, {
              name: 'after downgrade',
              schemas: { 1: OPEN_SCHEMA },
            }),
          );
          expect(fresh).toEqual({ status: 422, error: 'quota_exceeded' });
          const unused = await knex('extensions')
            .where({ tenant_id: tenant.tenantId })
            .whereNotIn('id', knex('person_extensions').select('extension_id'))
            .first('id');
          expect(
            (await api.put(token, tenant.personId, unused.id, { schemaVersion: 1, data: {} }, CREATE)).status,
          ).toBe(201);
        } finally {
          await setPlan('Q5');
        }
      });
    });
  });
});
