// `npm run bench`: throughput and latency of the API path and of its parts, each against a baseline (a bare
// node:http JSON answer) measured in the same run, so figures compare across noisy machines as ratios.
// Uses DATABASE_URL / REDIS_URL when set, embedded defaults otherwise. Loopback only; bounded in time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { loadConfig } from '../common/config.js';
import { INTERNAL_SECRET_HEADER, contextSigner } from '../common/internal-context.js';
import { DECISION_PATH } from '../policies/decision.js';
import { startTestSystem } from './support/system.js';
import { adminClient, setupTenant } from './support/admin.js';
import { launchBrowser } from './support/browser.js';
import { obtainTokens } from './support/oauth.js';
import { registerExtension } from './support/extensions.js';
import { benchExtensionRecords, compareSizes, type ExtensionBenchSetup } from './support/bench-extensions.js';
import type { System } from '../infra/system.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** Records stored for the second extension measurement (the first is at 1,000). */
const EXTENSION_RECORDS = Number(process.env.BENCH_EXTENSION_RECORDS ?? 1_000_000);

interface Target {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Headers made afresh for each request (a signed call context is bound to one request and expires). */
  perRequestHeaders?: () => Record<string, string>;
  body?: string;
}

async function measure(t: Target) {
  const r = await autocannon({
    url: t.url, method: t.method ?? 'GET', headers: t.headers, body: t.body,
    connections: CONNECTIONS, duration: DURATION_S,
    // The load runs in a worker thread, except where headers are made per request: a function cannot be sent to a
    // worker, so that target's load shares the event loop with the services (its figure is a floor).
    ...(t.perRequestHeaders
      ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, ...t.perRequestHeaders!() } }) }] }
      : { workers: 1 }),
  });
  if (r.non2xx || r.errors) throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { name: t.name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

const baseline = http.createServer((_req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end('{"ok":true}');
});
await new Promise<void>((resolve) => baseline.listen(0, '127.0.0.1', resolve));
const system = await startTestSystem({ INTERNAL_SECRET: 'bench-internal-secret-0123456789abcdef' });
// A second system on its own database holds the large extension, so both sizes can be measured in alternation.
const largeSystem = await startTestSystem({ INTERNAL_SECRET: 'bench-internal-secret-0123456789abcdef' });

async function extensionSetup(s: System): Promise<ExtensionBenchSetup> {
  const admin = adminClient(s);
  const { tenantId, clientId } = await setupTenant(admin);
  return {
    knex: s.db.knex, backendUrl: s.backendUrl, internalSecret: 'bench-internal-secret-0123456789abcdef', tenantId, clientId,
    extensionId: await registerExtension(admin, clientId), connections: CONNECTIONS, durationS: DURATION_S,
  };
}

try {
  const admin = adminClient(system);
  const tenant = await setupTenant(admin);
  // Limits high enough that the benchmark measures the path, not the limiter's 429s.
  await admin.ok('PATCH', `/tenants/${tenant.tenantId}`, { rateLimit: { tenant: { points: 1_000_000, durationS: 60 }, account: { points: 1_000_000, durationS: 60 } } });
  const browser = await launchBrowser();
  const { access_token } = await obtainTokens(browser, { authUrl: system.authUrl, ...tenant }, tenant, 'svc.profile.self.read').finally(() => browser.close());
  const claims = JSON.parse(Buffer.from(access_token.split('.')[1]!, 'base64url').toString());

  const sign = contextSigner('bench-internal-secret-0123456789abcdef');
  const targets: Target[] = [
    { name: 'baseline: node:http JSON', url: `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/` },
    {
      name: 'backend GET /v1/me (direct)',
      url: `${system.backendUrl}/v1/me`,
      headers: { 'x-request-id': 'bench-0001' },
      perRequestHeaders: () => sign(
        { requestId: 'bench-0001', subjectType: 'person', subjectId: tenant.personId, tenantId: tenant.tenantId,
          clientId: tenant.clientId, actorAccountId: tenant.accountId, scopes: ['svc.profile.self.read'] },
        { method: 'GET', path: '/v1/me' },
      ),
    },
    {
      name: 'PDP decision (direct)',
      url: `${system.pdpUrl}${DECISION_PATH}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', [INTERNAL_SECRET_HEADER]: 'bench-internal-secret-0123456789abcdef' },
      body: JSON.stringify({ requestId: 'bench-0001', token: claims, capability: 'svc.profile.self.read', resource: { type: 'self' } }),
    },
    { name: 'gateway GET /v1/me (full path)', url: `${system.baseUrl}/me`, headers: { authorization: `Bearer ${access_token}` } },
  ];
  const results = [];
  for (const t of targets) results.push(await measure(t));
  const extensionResults = await benchExtensionRecords(await extensionSetup(system), await extensionSetup(largeSystem), EXTENSION_RECORDS);
  results.push(...extensionResults);
  const base = results[0]!.rps;
  const config = loadConfig();
  console.log(`\n${DURATION_S}s per target, ${CONNECTIONS} connections, database ${config.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}, limiter ${config.REDIS_URL ? 'Redis' : 'in-process'}`);
  console.log('target                              req/s   p50 ms  p99 ms  throughput vs baseline');
  for (const r of results)
    console.log(`${r.name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(7)}  ${(r.rps / base).toFixed(3)}`);
  for (const line of compareSizes(extensionResults)) console.log(line);
} finally {
  await system.close();
  await largeSystem.close();
  baseline.close();
}
