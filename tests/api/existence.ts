// Existence never leaks (contract §4.4, §4.6, §7.3): a person or record the caller may not see, and one that does
// not exist, get the same 404: the bytes of the answer, head and body, identical apart from the request id (and the
// clock's `date`), and response times that cannot be told apart (interleaved samples compared with a Mann-Whitney U test).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { Pool } from 'undici';
import { ulid } from 'ulid';
import type { System } from '../../infra/system.js';
import { startProbingSystem } from '../support/system.js';
import { adminClient, createPerson, setupMachineClient, type MachineClientSetup } from '../support/admin.js';
import { clientCredentialsToken } from '../support/oauth.js';
import { registerExtension } from '../support/extensions.js';
import { leakIn } from '../support/fuzz.js';
import { mannWhitney } from '../support/statistics.js';
import { rawHeader, rawHttp, rawJson, rawStatus } from '../support/raw-http.js';
import { CAPABILITIES } from '../../wire/decision.js';

describe('existence', () => {
  /** Samples per kind of 404 in the timing comparison, taken in interleaved pairs. */
  const TIMING_SAMPLES = Number(process.env.EXISTENCE_TIMING_SAMPLES ?? 300);
  /**
   * Largest tolerated distance of P(forbidden slower than absent) from 1/2. Under no difference its standard error
   * is ~0.024 at 300 samples each, so 0.15 is six of them: noise from parallel suites on the 2-core machine hits both
   * kinds alike (interleaved, in random order per pair) and stays far inside, while a difference of a database
   * round trip on every forbidden request moves it well past 0.15.
   */
  const MAX_EFFECT = 0.15;

  let system: System;
  let pool: Pool;
  let a: MachineClientSetup & { token: string; extensionId: string; otherExtensionId: string };
  let b: MachineClientSetup & { extensionId: string };
  let unrelatedPersonId: string;

  beforeAll(async () => {
    system = await startProbingSystem({ ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true' });
    const admin = adminClient(system);
    const unlimited = {
      rateLimit: { tenant: { points: 1_000_000, durationS: 60 }, account: { points: 1_000_000, durationS: 60 } },
    };
    const [tenantA, tenantB] = [
      await setupMachineClient(admin, { grant: CAPABILITIES }),
      await setupMachineClient(admin, { grant: CAPABILITIES }),
    ];
    await admin.ok('PATCH', `/tenants/${tenantA.tenantId}`, unlimited);
    const token = await clientCredentialsToken(system.authUrl, tenantA, CAPABILITIES.join(' '));
    a = { ...tenantA, token, extensionId: await registerExtension(admin, tenantA.clientId), otherExtensionId: '' };
    b = { ...tenantB, extensionId: await registerExtension(admin, tenantB.clientId) };
    // Another app of tenant A, with its own extension: A's app does not own it.
    const sibling = await admin.ok('POST', `/tenants/${a.tenantId}/clients`, {
      slug: 'sibling',
      name: 'Sibling',
      kind: 'third_party',
      type: 'public',
      redirectUris: ['http://127.0.0.1:8400/cb'],
    });
    a.otherExtensionId = await registerExtension(admin, sibling.clientId);
    // B's person holds a record of B's extension, written by B's app.
    const tokenB = await clientCredentialsToken(system.authUrl, b, CAPABILITIES.join(' '));
    const put = await fetch(`${system.baseUrl}/persons/${b.personId}/extensions/${b.extensionId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tokenB}`, 'if-none-match': '*', 'content-type': 'application/json' },
      body: '{"schemaVersion":1,"data":{"note":"b"}}',
    });
    expect(put.status).toBe(201);
    // A person whose only relationship has ended.
    unrelatedPersonId = await createPerson(admin, b.tenantId);
    await admin.ok('DELETE', `/tenants/${b.tenantId}/persons/${unrelatedPersonId}`);
    pool = new Pool(new URL(system.baseUrl).origin, { connections: 1, headersTimeout: 15_000, bodyTimeout: 15_000 });
  }, 120_000);
  afterAll(async () => {
    await pool?.close();
    await system?.close();
  });

  const absentPersonId = () => `psn_${ulid().toLowerCase()}`;

  interface Answer {
    status: number;
    headers: Record<string, unknown>;
    body: string;
  }

  async function call(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<Answer> {
    const res = await pool.request({
      method: method as 'GET',
      path: `/v1${path}`,
      headers: { authorization: `Bearer ${a.token}`, ...headers },
      body,
    });
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  }

  /**
   * The request written out byte for byte on a connection of its own, and its answer as the bytes that came back, with
   * what may differ between two requests replaced: the request id (header and body) and the date.
   */
  async function rawCall(method: string, path: string, headers: Record<string, string> = {}, body = '') {
    const head = Object.entries({ authorization: `Bearer ${a.token}`, ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const answer = await rawHttp(
      system.baseUrl,
      `${method} /v1${path} HTTP/1.1\r\nhost: gateway\r\n${head}content-length: ${Buffer.byteLength(body)}\r\n` +
        `connection: close\r\n\r\n${body}`,
    );
    const id = rawHeader(answer, 'x-request-id')!;
    return answer
      .split(id)
      .join('<request id>')
      .replace(/\r\ndate: [^\r]*\r\n/i, '\r\ndate: <date>\r\n');
  }

  describe('a 404 says nothing about existence', () => {
    const kinds = (): Record<string, [string, string, Record<string, string>?, string?][]> => {
      const record = (person: string, extension: string) => `/persons/${person}/extensions/${extension}`;
      const write = { 'if-none-match': '*', 'content-type': 'application/json' };
      const body = '{"schemaVersion":1,"data":{}}';
      return {
        'GET a person': [
          ['GET', `/persons/${b.personId}`],
          ['GET', `/persons/${unrelatedPersonId}`],
          ['GET', `/persons/${absentPersonId()}`],
          ['GET', '/persons/psn_not-an-id'],
        ],
        "GET a person's extensions": [
          ['GET', `/persons/${b.personId}/extensions`],
          ['GET', `/persons/${unrelatedPersonId}/extensions`],
          ['GET', `/persons/${absentPersonId()}/extensions`],
        ],
        'GET a record': [
          ['GET', record(b.personId, b.extensionId)],
          ['GET', record(b.personId, a.extensionId)],
          ['GET', record(a.personId, a.extensionId)],
          ['GET', record(a.personId, b.extensionId)],
          ['GET', record(a.personId, a.otherExtensionId)],
          ['GET', record(a.personId, 'ext_unregistered_x')],
          ['GET', record(absentPersonId(), a.extensionId)],
        ],
        'PUT a record': [
          ['PUT', record(b.personId, b.extensionId), write, body],
          ['PUT', record(b.personId, a.extensionId), write, body],
          ['PUT', record(a.personId, b.extensionId), write, body],
          ['PUT', record(a.personId, a.otherExtensionId), write, body],
          ['PUT', record(absentPersonId(), a.extensionId), write, body],
          [
            'PUT',
            record(a.personId, a.extensionId),
            { 'if-match': '"gone"', 'content-type': 'application/json' },
            body,
          ],
        ],
        'DELETE a record': [
          ['DELETE', record(b.personId, b.extensionId), { 'if-match': '*' }],
          ['DELETE', record(b.personId, a.extensionId), { 'if-match': '*' }],
          ['DELETE', record(a.personId, b.extensionId), { 'if-match': '*' }],
          ['DELETE', record(a.personId, a.otherExtensionId), { 'if-match': '*' }],
          ['DELETE', record(absentPersonId(), a.extensionId), { 'if-match': '*' }],
        ],
      };
    };

    it.each(['GET a person', "GET a person's extensions", 'GET a record', 'PUT a record', 'DELETE a record'])(
      '%s: forbidden and absent answer byte for byte the same 404, apart from the request id',
      async (kind) => {
        const answers = [];
        for (const [method, path, headers, body] of kinds()[kind]!) {
          const answer = await rawCall(method, path, headers, body);
          expect(leakIn(answer, [a.token, a.clientSecret, b.clientSecret])).toBeUndefined();
          answers.push({ request: `${method} ${path}`, answer });
        }
        const [first] = answers;
        expect(rawStatus(first!.answer)).toBe(404);
        expect(rawJson(first!.answer)).toEqual({ error: 'not_found', requestId: '<request id>' });
        for (const { answer } of answers) expect({ request: first!.request, answer }).toEqual(first);
      },
    );

    it("B's record is still there, untouched by A's refused writes", async () => {
      const rows = await system.db.knex('person_extensions').where({ person_id: b.personId });
      expect(rows.map((r) => r.data)).toEqual([{ note: 'b' }]);
    });

    it('forbidden and absent persons take times that cannot be told apart', async () => {
      const forbidden: number[] = [];
      const absent: number[] = [];
      const timed = async (path: string, into: number[]) => {
        const start = process.hrtime.bigint();
        const answer = await call('GET', path);
        into.push(Number(process.hrtime.bigint() - start) / 1e6);
        expect(answer.status).toBe(404);
      };
      // warm-up: connections, prepared statements
      for (let i = 0; i < 20; i++) await timed(`/persons/${absentPersonId()}`, []);
      for (let i = 0; i < TIMING_SAMPLES; i++) {
        const pair: [string, number[]][] = [
          [`/persons/${b.personId}`, forbidden],
          [`/persons/${absentPersonId()}`, absent],
        ];
        if (Math.random() < 0.5) pair.reverse();
        for (const [path, into] of pair) await timed(path, into);
      }
      const result = mannWhitney(forbidden, absent);
      console.log(
        `404 timing, ${TIMING_SAMPLES} interleaved samples each: forbidden median ` +
          `${result.medianA.toFixed(2)} ms, absent median ${result.medianB.toFixed(2)} ms; ` +
          `P(forbidden slower) = ${result.effect.toFixed(3)} (tolerated 0.5 ± ${MAX_EFFECT}), ` +
          `Mann-Whitney z = ${result.z.toFixed(2)}, p = ${result.p.toFixed(3)}`,
      );
      expect(Math.abs(result.effect - 0.5)).toBeLessThanOrEqual(MAX_EFFECT);
    }, 180_000);
  });
});
