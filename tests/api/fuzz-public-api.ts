// Property-based fuzzing of the public API with fast-check: requests built from the operations of public-api.yaml,
// mixing well-formed values (real ids, valid bodies and preconditions) with hostile ones (malformed ids and
// escapes, unicode edge cases, NULs, huge numbers, deep nesting, oversized and non-JSON bodies, duplicate and
// malformed headers). Whatever arrives, every answer is one the document declares for that operation (status,
// headers, body), carries x-request-id, has no internals or secrets in an error body, and is never a 500 or a 503:
// the dependencies are up, so a 503 would be a failure of ours passed off as theirs.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import fc from 'fast-check';
import { Pool } from 'undici';
import type { Browser } from 'playwright-core';
import type { System } from '../../infra/system.js';
import { startProbingSystem } from '../support/system.js';
import { adminClient, setupTenant, type TenantSetup } from '../support/admin.js';
import { launchBrowser } from '../support/browser.js';
import { obtainTokens } from '../support/oauth.js';
import { assertResponseMatches } from '../support/openapi.js';
import { asTarget, encodeLoosely, leakIn } from '../support/fuzz.js';
import { CAPABILITIES } from '../../wire/decision.js';

describe('fuzz-public-api', () => {
  const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

  let system: System;
  let browser: Browser;
  let tenant: TenantSetup;
  let token: string;
  let extensionId: string;
  let pool: Pool;
  /** PUTs the fuzzer got accepted: the last check reads back records the fuzzer really wrote. */
  let acceptedWrites = 0;

  beforeAll(async () => {
    [system, browser] = await Promise.all([startProbingSystem(), launchBrowser()]);
    const admin = adminClient(system);
    tenant = await setupTenant(admin, { capabilities: CAPABILITIES });
    // Limits far above what the run sends: the fuzzer looks for wrong answers, not for 429s.
    await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, {
      rateLimit: { tenant: { points: 1_000_000, durationS: 60 }, account: { points: 1_000_000, durationS: 60 } },
    });
    const extension = await admin.ok('POST', `/clients/${tenant.clientId}/extensions`, {
      name: 'fuzz notes',
      schemas: {
        1: {
          type: 'object',
          properties: { note: { type: 'string', maxLength: 2000 }, n: { type: 'integer' } },
          additionalProperties: true,
        },
      },
    });
    extensionId = extension.extensionId;
    token = (
      await obtainTokens(
        browser,
        { authUrl: system.authUrl, clientId: tenant.clientId, redirectUri: tenant.redirectUri },
        tenant,
        CAPABILITIES.join(' '),
      )
    ).access_token;
    // One stored record from the start: updates with its ETag and deletes with `If-Match: *` reach a real record.
    const stored = await fetch(`${system.baseUrl}/persons/${tenant.personId}/extensions/${extensionId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'if-none-match': '*', 'content-type': 'application/json' },
      body: JSON.stringify({ schemaVersion: 1, data: { note: 'seed', n: 1 } }),
    });
    if (stored.status !== 201) throw new Error(`seed record: ${stored.status}`);
    // A request the system never answers is a failure to report, not a reason to wait for undici's 300 s default.
    pool = new Pool(new URL(system.baseUrl).origin, { connections: 4, headersTimeout: 15_000, bodyTimeout: 15_000 });
  });
  afterAll(async () => {
    await pool?.close();
    await browser?.close();
    await system?.close();
  });

  // ---- arbitraries -------------------------------------------------------------------------------------------------

  const ULID = /^[0-9a-hjkmnp-tv-z]{26}$/;
  /** Hostile path segments, sent as they are (already escaped or deliberately broken escapes). */
  const hostileSegment = fc.constantFrom(
    '',
    '.',
    '..',
    '%2e%2e',
    '%2F',
    '%00',
    '%',
    '%zz',
    '%ED%A0%80',
    '%C0%AF',
    '%F0%9F%98%80',
    'PSN_01ARZ3NDEKTSV4RRFFQ69G5FAV',
    `psn_${'0'.repeat(26)}%00`,
    "psn_' OR 1=1 --",
    'psn_01arz3ndektsv4rrffq69g5fav%20',
    'a'.repeat(5000),
    '%E2%80%AE',
    'null',
    '[]',
    '{}',
  );
  const personSegment = () =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant(tenant.personId) },
      { weight: 2, arbitrary: fc.stringMatching(ULID).map((s) => `psn_${s}`) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map(encodeLoosely) },
      { weight: 2, arbitrary: hostileSegment.map(asTarget) },
    );
  const extensionSegment = () =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant(extensionId) },
      { weight: 2, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{2,63}$/) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 70 }).map(encodeLoosely) },
      { weight: 2, arbitrary: hostileSegment.map(asTarget) },
    );

  const queryValue = fc.oneof(
    fc.integer({ min: -5, max: 205 }).map(String),
    fc
      .constantFrom(
        '',
        '1e2',
        '20.5',
        '0x10',
        ' 5',
        '5 ',
        '+5',
        '99999999999999999999999',
        'NaN',
        'Infinity',
        '%00',
        'abc',
        '１０',
      )
      .map(asTarget),
    fc.string({ maxLength: 600 }).map(encodeLoosely),
  );
  const query = fc
    .record(
      {
        limit: fc.option(queryValue, { nil: undefined }),
        cursor: fc.option(queryValue, { nil: undefined }),
        twice: fc.boolean(),
      },
      { requiredKeys: [] },
    )
    .map(({ limit, cursor, twice }) => {
      const parts = [
        ...(limit === undefined ? [] : [`limit=${limit}`]),
        ...(cursor === undefined ? [] : [`cursor=${cursor}`]),
        ...(twice && limit !== undefined ? [`limit=${limit}`] : []),
      ];
      return parts.length ? `?${parts.join('&')}` : '';
    });

  const etagLike = fc.oneof(
    fc.constantFrom('*', '"x"', '""', 'W/"x"', '"a", "b"', 'unquoted', '"\u00e9"', '"'.repeat(3), ' "x" ', '*, "x"'),
    fc.string({ maxLength: 60 }).map((s) => `"${s.replace(/[\r\n\0"]/g, '')}"`),
  );
  const preconditions = fc.oneof(
    { weight: 2, arbitrary: fc.constant({ 'if-none-match': '*' }) }, // a create, so that valid writes happen too
    { weight: 1, arbitrary: fc.constant({ 'if-match': '*' }) },
    {
      weight: 4,
      arbitrary: fc.record(
        {
          'if-match': fc.option(etagLike, { nil: undefined }),
          'if-none-match': fc.option(etagLike, { nil: undefined }),
        },
        { requiredKeys: [] },
      ),
    },
  );

  /** JSON nested `depth` levels deep. */
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const writeBody = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .record({ note: fc.string({ unit: 'grapheme', maxLength: 200 }), n: fc.integer() })
        .map((data) => JSON.stringify({ schemaVersion: 1, data })),
    },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((data) => JSON.stringify({ schemaVersion: 1, data })) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: fc
        .record({
          schemaVersion: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(1e308)),
          data: fc.object(),
        })
        .map((b) => JSON.stringify(b)),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: 'binary', maxLength: 300 })
        .map((s) => JSON.stringify({ schemaVersion: 1, data: { note: s } })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '{',
        'null',
        '[]',
        '"x"',
        '{"schemaVersion":1}',
        '{"schemaVersion":1,"data":{},"extra":1}',
        '{"schemaVersion":1,"data":{"__proto__":{"x":1}}}',
        `{"schemaVersion":1,"data":{"x":${nested(5000)}}}`,
        '{"schemaVersion":99999999999999999999999,"data":{}}',
        '{"schemaVersion":1,"data":{"n":1e400}}',
        JSON.stringify({ schemaVersion: 1, data: { note: 'x'.repeat(17_000) } }),
        JSON.stringify({ schemaVersion: 1, data: { note: 'é'.repeat(9_000) } }),
        `{"schemaVersion":1,"data":{"note":"${'x'.repeat(2_000_000)}"}}`,
        '{"schemaVersion":1,"data":{"note":"\\ud800"}}',
        '{"schemaVersion":1,"data":{"note":"\\u0000"}}',
      ),
    },
  );
  const contentType = fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    undefined,
  );

  // ---- the property ------------------------------------------------------------------------------------------------

  interface Sent {
    operationId: string;
    method: 'GET' | 'PUT' | 'DELETE';
    path: string;
    headers?: Record<string, string | undefined>;
    body?: string;
  }

  /** Stands for the stored record's ETag as it is when the request is sent (each accepted write changes it). */
  const CURRENT_ETAG = "the stored record's current etag";

  async function currentEtag(): Promise<string> {
    const res = await pool.request({
      method: 'GET',
      path: `/v1/persons/${tenant.personId}/extensions/${extensionId}`,
      headers: { authorization: `Bearer ${token}` },
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`the stored record: ${res.statusCode}`);
    return String(res.headers.etag);
  }

  async function send({ method, path, headers = {}, body }: Sent) {
    if (headers['if-match'] === CURRENT_ETAG) headers = { ...headers, 'if-match': await currentEtag() };
    const res = await pool.request({
      method,
      path: `/v1${path}`,
      headers: Object.fromEntries(
        Object.entries({ authorization: `Bearer ${token}`, ...headers }).filter(([, v]) => v !== undefined),
      ) as Record<string, string>,
      body,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers as Record<string, string>, body: text };
  }

  async function expectDeclaredAnswer(request: Sent) {
    let answer;
    try {
      answer = await send(request);
    } catch (err) {
      throw new Error(`${request.method} ${request.path}: no answer (${(err as Error).message})`);
    }
    const where =
      `${request.method} ${request.path.slice(0, 200)} ` +
      `${JSON.stringify(request.headers ?? {})} body ${String(request.body).slice(0, 120)}`;
    if (answer.status >= 500) throw new Error(`${where} -> ${answer.status} ${answer.body.slice(0, 300)}`);
    if (!answer.headers['x-request-id']) throw new Error(`${where} -> ${answer.status} without x-request-id`);
    const leak = answer.status >= 400 ? leakIn(answer.body, [token], [answer.headers['x-request-id']]) : undefined;
    if (leak) throw new Error(`${where} -> ${answer.status}: the error body carries ${leak}`);
    // A path the router cannot match (an empty segment, an escaped slash) is not this operation: any 404 Problem does.
    try {
      assertResponseMatches('public', request.operationId, answer);
    } catch (err) {
      throw new Error(`${where}\n${(err as Error).message}`);
    }
    if (request.method === 'PUT' && (answer.status === 200 || answer.status === 201)) acceptedWrites++;
  }

  const property = (arbitrary: fc.Arbitrary<Sent>) =>
    fc.assert(fc.asyncProperty(arbitrary, expectDeclaredAnswer), { numRuns: RUNS, endOnFailure: true });

  describe('fuzzing every public operation: only declared answers, never a 5xx', () => {
    it('getPerson', () =>
      property(personSegment().map((p) => ({ operationId: 'getPerson', method: 'GET', path: `/persons/${p}` }))));

    it('listPersonExtensions', () =>
      property(
        fc.tuple(personSegment(), query).map(([p, q]) => ({
          operationId: 'listPersonExtensions',
          method: 'GET',
          path: `/persons/${p}/extensions${q}`,
        })),
      ));

    it('getPersonExtension', () =>
      property(
        fc.tuple(personSegment(), extensionSegment()).map(([p, e]) => ({
          operationId: 'getPersonExtension',
          method: 'GET',
          path: `/persons/${p}/extensions/${e}`,
        })),
      ));

    it('putPersonExtension', () =>
      property(
        fc
          .tuple(personSegment(), extensionSegment(), preconditions, writeBody, contentType)
          .map(([p, e, pre, body, type]) => ({
            operationId: 'putPersonExtension',
            method: 'PUT',
            path: `/persons/${p}/extensions/${e}`,
            headers: { ...pre, 'content-type': type },
            body,
          })),
      ));

    // Updates of the stored record with its current ETag, so accepted writes (and their validation) certainly happen.
    it('putPersonExtension on the stored record', () =>
      property(
        fc.tuple(writeBody, contentType).map(([body, type]) => ({
          operationId: 'putPersonExtension',
          method: 'PUT',
          path: `/persons/${tenant.personId}/extensions/${extensionId}`,
          headers: { 'if-match': CURRENT_ETAG, 'content-type': type },
          body,
        })),
      ));

    it('left every stored record whole and valid under its schema after the writes (before the deletes)', async () => {
      const records = await system.db.knex('person_extensions').select('*');
      expect(acceptedWrites).toBeGreaterThan(0);
      expect(records.length).toBeGreaterThan(0);
      for (const { data, schema_version: version, etag } of records) {
        expect(version).toBe(1);
        expect(etag).toMatch(/^"[^"]+"$/);
        expect(Buffer.byteLength(JSON.stringify(data))).toBeLessThanOrEqual(16 * 1024);
        if ('note' in data) expect(typeof data.note === 'string' && data.note.length <= 2000).toBe(true);
        if ('n' in data) expect(Number.isInteger(data.n)).toBe(true);
      }
    });

    it('deletePersonExtension', () =>
      property(
        fc.tuple(personSegment(), extensionSegment(), preconditions).map(([p, e, pre]) => ({
          operationId: 'deletePersonExtension',
          method: 'DELETE',
          path: `/persons/${p}/extensions/${e}`,
          headers: pre,
        })),
      ));

    it('getMe and getTenant with hostile headers', () =>
      property(
        fc
          .tuple(
            fc.constantFrom('getMe', 'getTenant'),
            fc.record(
              {
                'x-request-id': fc.option(
                  fc.string({ maxLength: 300 }).map((s) => s.replace(/[^\x21-\x7e]/g, '')),
                  { nil: undefined },
                ),
                accept: fc.option(fc.constantFrom('*/*', 'text/html', 'application/xml', 'application/json;q=0'), {
                  nil: undefined,
                }),
              },
              { requiredKeys: [] },
            ),
          )
          .map(([operationId, headers]) => ({
            operationId,
            method: 'GET' as const,
            path: operationId === 'getMe' ? '/me' : '/tenant',
            headers,
          })),
      ));
  });
});
