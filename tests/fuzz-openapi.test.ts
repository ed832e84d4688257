// Property-based fuzzing of every operation of the three OpenAPI documents (public API, token endpoint, admin API),
// with requests generated from the documents themselves (tests/support/fuzz.ts): path parameters, query, headers
// and bodies, well-formed or hostile. Whatever arrives:
//   - every answer is one the document declares for that operation (status, headers, a Problem with a contract
//     code, or the token endpoint's TokenError), carries x-request-id, and is never a 5xx (the dependencies are up);
//   - no error body carries internal paths, stack traces, SQL or a secret of this system;
//   - a rejected write changes no record: every domain table is read back after it and compared.
// FUZZ_CASES is the number of cases in all, spread over the operations: 2,000 by default, sized for `npm test`'s quick
// feedback; CI adds a long run of 10,000 (.ci/run), and any number can be asked for. Case counts per operation and in
// total are printed.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import fc from 'fast-check';
import { Pool } from 'undici';
import type { System } from '../infra/system.js';
import { randomSecret } from '../common/secrets.js';
import { startProbingSystem } from './support/system.js';
import { domainDigest } from './support/database.js';
import { adminClient, setupMachineClient, type MachineClientSetup } from './support/admin.js';
import { clientCredentialsToken } from './support/oauth.js';
import { registerExtension } from './support/extensions.js';
import { assertResponseMatches, operationsOf, type DocName } from './support/openapi.js';
import { leakIn, requestArbitrary, type Fixtures, type FuzzRequest, type RequestOptions } from './support/fuzz.js';
import { CAPABILITIES } from '../wire/decision.js';

// admin last: its accepted writes (closing capabilities ...) would disturb the others
const DOCS: DocName[] = ['public', 'token', 'admin'];
const OPERATIONS = DOCS.flatMap((doc) => operationsOf(doc));
const TOTAL = Number(process.env.FUZZ_CASES ?? 2_000);
const RUNS = Math.ceil(TOTAL / OPERATIONS.length);
const NODE_MAX_HEADER_BYTES = 16 * 1024;

let system: System;
let secrets: string[];
let options: Record<DocName, RequestOptions>;
let pools: Record<DocName, { pool: Pool; prefix: string }>;
let recordsNow: string;
const counts = new Map<string, Map<number, number>>();

beforeAll(async () => {
  const [adminToken, internalSecret] = [randomSecret(), randomSecret()];
  system = await startProbingSystem({
    ADMIN_TOKEN: adminToken,
    INTERNAL_SECRET: internalSecret,
    ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
  });
  const admin = adminClient(system);
  const unlimited = {
    rateLimit: { tenant: { points: 1_000_000, durationS: 60 }, account: { points: 1_000_000, durationS: 60 } },
  };

  // The public API's tenant: a machine client holding every capability, an extension and one stored record.
  const api: MachineClientSetup = await setupMachineClient(admin, { grant: CAPABILITIES });
  await admin.ok('PATCH', `/tenants/${api.tenantId}`, unlimited);
  const apiExtension = await registerExtension(admin, api.clientId);
  const token = await clientCredentialsToken(system.authUrl, api, CAPABILITIES.join(' '));
  const created = await fetch(`${system.baseUrl}/persons/${api.personId}/extensions/${apiExtension}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'if-none-match': '*', 'content-type': 'application/json' },
    body: JSON.stringify({ schemaVersion: 1, data: { note: 'x' } }),
  });
  if (created.status !== 201) throw new Error(`record: ${created.status}`);
  const publicClient = await admin.ok('POST', `/tenants/${api.tenantId}/clients`, {
    slug: 'web',
    name: 'Web',
    kind: 'third_party',
    type: 'public',
    redirectUris: ['http://127.0.0.1:8400/cb'],
  });

  // The admin API's tenant, separate so the public fixtures stay as they are.
  const managed: MachineClientSetup = await setupMachineClient(admin, { grant: CAPABILITIES });
  const managedExtension = await registerExtension(admin, managed.clientId);
  const tenantKey = await admin.ok('POST', `/tenants/${managed.tenantId}/admin-keys`);

  secrets = [
    adminToken,
    internalSecret,
    token,
    api.clientSecret,
    managed.clientSecret,
    tenantKey.key,
    api.password,
    managed.password,
  ];
  const fixtures: Fixtures = {
    personId: [api.personId],
    extensionId: [apiExtension],
    'If-Match': ['*', created.headers.get('etag')!],
    'If-None-Match': ['*'],
    limit: ['1', '20', '100'],
  };
  // Not form-encoded first (support/oauth.ts basicAuth would): '%00' must reach the issuer as written.
  const rawBasic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  options = {
    public: {
      fixtures,
      authorizations: [
        `Bearer ${token}`,
        undefined,
        'Bearer a.b.c',
        'Basic eDp5',
        `Bearer ${token}x`,
        `bearer ${token}`,
      ],
    },
    token: {
      fixtures: {},
      authorizations: [
        undefined,
        rawBasic(api.clientId, api.clientSecret),
        rawBasic(publicClient.clientId, ''),
        rawBasic('%00', 'x'),
        'Basic !!!',
        `Bearer ${token}`,
      ],
    },
    admin: {
      fixtures: {
        tenantId: [managed.tenantId],
        clientId: [managed.clientId],
        accountId: [managed.serviceAccountId, managed.accountId],
        personId: [managed.personId],
        extensionId: [managedExtension],
        keyId: [tenantKey.keyId],
        version: ['1', '2'],
        capability: CAPABILITIES,
        limit: ['1', '50', '1000'],
      },
      authorizations: [
        `Bearer ${adminToken}`,
        `Bearer ${tenantKey.key}`,
        undefined,
        'Bearer wrong',
        `Bearer ${tenantKey.keyId}.wrong`,
        `Bearer ${adminToken} `,
      ],
    },
  };
  // Well-formed token requests name real clients: the schema alone would only ever name unknown ones.
  options.token.fixtures = { client_id: [api.clientId, publicClient.clientId] };
  const keepAlive = (url: string) =>
    new Pool(new URL(url).origin, { connections: 1, pipelining: 1, headersTimeout: 15_000, bodyTimeout: 15_000 });
  pools = {
    public: { pool: keepAlive(system.baseUrl), prefix: new URL(system.baseUrl).pathname },
    token: { pool: keepAlive(system.authUrl), prefix: '' },
    admin: { pool: keepAlive(system.pdpUrl), prefix: '/admin/v1' },
  };
  recordsNow = await records();
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(pools ?? {}).map(({ pool }) => pool.close()));
  await system?.close();
});

const records = () => domainDigest(system.db);

const describeRequest = (r: FuzzRequest) =>
  `${r.method} ${r.path.slice(0, 200)} ${JSON.stringify(r.headers).slice(0, 300)} body ${String(r.body).slice(0, 160)}`;

async function expectContractAnswer(request: FuzzRequest): Promise<void> {
  const { pool, prefix } = pools[request.doc];
  let status: number;
  let headers: Record<string, string | string[] | undefined>;
  let text: string;
  try {
    const res = await pool.request({
      method: request.method as 'GET',
      path: `${prefix}${request.path}`,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(20_000),
    });
    [status, headers, text] = [res.statusCode, res.headers, await res.body.text()];
  } catch (err) {
    throw new Error(`${describeRequest(request)}: no answer (${(err as Error).message})`);
  }
  const perStatus = counts.get(`${request.doc} ${request.operationId}`) ?? new Map<number, number>();
  perStatus.set(status, (perStatus.get(status) ?? 0) + 1);
  counts.set(`${request.doc} ${request.operationId}`, perStatus);
  const fail = (what: string) => {
    throw new Error(`${describeRequest(request)}\n-> ${status} ${text.slice(0, 300)}\n${what}`);
  };
  if (status >= 500) fail('a 5xx');
  if (!headers['x-request-id']) fail('no x-request-id');
  if (status === 431) {
    // Node's parser refuses a request line and headers over 16 KiB before any route: the documented Problem
    // (docs/decisions.md, "Answers Node writes itself"), for requests that size only.
    const headBytes = Buffer.byteLength(
      `${request.method} ${prefix}${request.path} HTTP/1.1\r\n${Object.entries(request.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}`,
    );
    if (headBytes < NODE_MAX_HEADER_BYTES - 256) fail(`431 for a request head of ${headBytes} bytes`);
    if (
      JSON.stringify(JSON.parse(text)) !==
      JSON.stringify({ error: 'payload_too_large', requestId: headers['x-request-id'] })
    )
      fail('431 without its Problem');
  } else {
    try {
      assertResponseMatches(request.doc, request.operationId, { status, headers, body: text });
    } catch (err) {
      fail((err as Error).message);
    }
  }
  if (status >= 400) {
    const leak = leakIn(text, secrets, [String(headers['x-request-id'])]);
    if (leak) fail(`the error body carries ${leak}`);
  }
  if (request.doc !== 'token' && request.method !== 'GET') {
    const after = await records();
    if (status >= 400 && after !== recordsNow) fail('a rejected write changed a record');
    recordsNow = after;
  }
}

for (const doc of DOCS) {
  describe(
    `fuzzing ${doc} operations from the document: declared answers only, ` +
      `no 5xx, no leaks, no change by a rejected write`,
    () => {
      for (const op of operationsOf(doc)) {
        it(`${op.operationId} (${RUNS} cases)`, async () => {
          await fc.assert(fc.asyncProperty(requestArbitrary(op, options[doc]), expectContractAnswer), {
            numRuns: RUNS,
            endOnFailure: true,
          });
        }, 600_000);
      }
    },
  );
}

describe('the run', () => {
  it(`fuzzed every operation of the three documents, ${TOTAL} cases or more in all`, () => {
    const lines = [...counts].map(([op, statuses]) => {
      const n = [...statuses.values()].reduce((a, b) => a + b, 0);
      return {
        op,
        n,
        line: `  ${op.padEnd(36)} ${String(n).padStart(6)}  ${[...statuses]
          .sort(([a], [b]) => a - b)
          .map(([s, c]) => `${s}:${c}`)
          .join(' ')}`,
      };
    });
    const total = lines.reduce((a, l) => a + l.n, 0);
    console.log(
      `fuzz cases per operation (status:count)\n${lines.map((l) => l.line).join('\n')}\n` +
        `  total ${total} cases over ${lines.length} operations`,
    );
    expect(lines.map((l) => l.op).sort()).toEqual(OPERATIONS.map((op) => `${op.doc} ${op.operationId}`).sort());
    expect(total).toBeGreaterThanOrEqual(TOTAL);
  });
});
