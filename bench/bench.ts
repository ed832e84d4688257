// `npm run bench`: throughput, latency and CPU per request of the API path and of its parts, each against baselines
// measured in the same run, so figures compare across noisy machines as ratios. The headline shape runs each service
// in its own process, as deployed; the four services in one process (`npm start`) are measured too. The load
// generator, the baselines, PostgreSQL and Redis are processes of their own; PostgreSQL and Redis are private to the
// run (stores.ts), so all their CPU is this run's. Never part of `npm test`.
//   BENCH_DURATION_S (5)  BENCH_CONNECTIONS (10)  BENCH_WARMUP_S (1)  BENCH_SHAPES (deployed,all-in-one)
//   BENCH_EXTENSION_RECORDS (1000000; 0 skips the 1,000 vs 1,000,000 records comparison)
//   BENCH_ONLY (scenario ids, e.g. R1,B2)  BENCH_CPU_PROF (a directory: the services write V8 CPU profiles there)
//   BENCH_PG_TOP (n: print the n statements PostgreSQL spent most time on over the whole run)
//   BENCH_TRACE_SAMPLING (0.1,1: R1 once more per ratio, deployed, traced with parentbased_traceidratio at that
//   ratio to an OTLP receiver in this process, which counts the spans after the measurement, as a collector elsewhere
//   would; `R1 traced/R1` compares each with the untraced R1; empty skips)
//   BENCH_TRACE_ROUNDS (3: interleaved rounds of that comparison, the median ratio printed)
//   BENCH_NODE (the newest Node in package.json's engines: bench/engines-node.ts starts this file on it)
import knexFactory from 'knex';
import { randomBytes } from 'node:crypto';
import { DECISION_PATH } from '../wire/decision.js';
import { INTERNAL_SECRET_HEADER } from '../common/internal-context.js';
import { cpuPerRequest, cpuSnapshot, type Measured } from './cpu.js';
import { startLoader } from './load.js';
import { readyMessage, spawnChild, startAllInOne, startDeployed, type Shape, type ShapeEnv } from './shapes.js';
import {
  perCore,
  printShape,
  printTargets,
  printTokenFigures,
  printDpopFigures,
  ratiosOf,
  writeResults,
  writeSweepChart,
  type Measurement,
  type ShapeResult,
  type TargetRuns,
} from './report.js';
import type { ScenarioSpec } from './scenarios.js';
import { MACHINE_SCOPE, prepare, WRITE_MIX_PERSONS, type BenchData } from './setup.js';
import { basicAuth } from '../tests/support/oauth.js';
import { startPrivatePostgres, startPrivateRedis, storeCounters } from './stores.js';
import { freePort, type Child } from '../tests/support/processes.js';
import { startOtlpReceiver } from '../tests/support/otlp-receiver.js';
import {
  benchExport,
  benchExtensionRecords,
  compareSizes,
  extensionSystems,
  type ExportResult,
  type LoopResult,
} from './extension-records.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 1);
const SHAPES = (process.env.BENCH_SHAPES ?? 'deployed,all-in-one').split(',');
const EXTENSION_RECORDS = Number(process.env.BENCH_EXTENSION_RECORDS ?? 1_000_000);
/** Scenario ids to measure (for profiling one path); unset = all. */
const ONLY = process.env.BENCH_ONLY?.split(',');
/** The sampling ratios R1 is measured traced at (issue 35: the cost of tracing). */
const TRACE_SAMPLING = (process.env.BENCH_TRACE_SAMPLING ?? '0.1,1').split(',').filter(Boolean).map(Number);

const SHAPE_INDEPENDENT = new Set(['B0', 'T0', 'C0', 'K6R', 'K6W']);
/** Connections of the concurrency sweep (R1 and B2 at each), and the one batching is judged at. */
const SWEEP = [1, 10, 64, 256];
const BATCH_CONNECTIONS = 64;

interface Scenario {
  id: string;
  label: string;
  origin: string;
  spec: ScenarioSpec;
}

const pg = await startPrivatePostgres();
const redis = await startPrivateRedis();
const stores: Measured[] = [
  { name: 'postgres', pid: pg.pid, tree: true },
  { name: 'redis', pid: redis.pid },
];
const counters = await storeCounters(pg, redis);
const loader = await startLoader();
const children: Child[] = [loader.child];
const stopAll: (() => Promise<void>)[] = [];

async function startBaseline(role: 'bare' | 'proxy' | 'oidc', env: Record<string, string> = {}) {
  const child = await spawnChild(
    role === 'bare' ? 'B0' : role === 'proxy' ? 'B2' : 'oidc-provider',
    'bench/baselines.ts',
    { PORT: String(await freePort()), ...env },
    [role],
  );
  children.push(child);
  stopAll.push(() => child.stop());
  return { child, ...(await readyMessage<OidcBaseline>(child)) };
}

/** What the oidc-provider baseline reports: its public client's refresh chains, and its machine client (C0). */
interface OidcBaseline {
  url: string;
  tokens?: string[];
  clientId: string;
  machine?: { clientId: string; clientSecret: string };
}

/** A client_credentials grant by HTTP Basic, the same request every time. */
const clientCredentials = (path: string, client: { clientId: string; clientSecret: string }, scope: string) =>
  ({
    kind: 'fixed',
    request: {
      method: 'POST',
      path,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(client.clientId, client.clientSecret),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    },
  }) satisfies ScenarioSpec;

/** A database of its own on the private server for each shape. */
async function databaseFor(shape: string): Promise<string> {
  const name = `bench_${shape.replace(/\W/g, '_')}`;
  const admin = knexFactory({ client: 'pg', connection: pg.url, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`).finally(() => admin.destroy());
  return pg.url.replace(/\/bench$/, `/${name}`);
}

/** `key` names the loader's connections, whose state (refresh chains, ETags) carries over from warm-up to run. */
async function measure(
  key: string,
  s: Scenario,
  processes: Measured[],
  rate?: number,
  connections = CONNECTIONS,
): Promise<Measurement> {
  const request = { key, origin: s.origin, spec: s.spec, connections };
  if (!rate && WARMUP_S > 0) await loader.run({ ...request, durationS: WARMUP_S });
  const measured = [...processes, { name: 'loader', pid: loader.child.pid }];
  const [before, countedBefore] = [cpuSnapshot(measured), await counters.read()];
  const result = await loader.run({ ...request, durationS: DURATION_S, ...(rate && { rate }) });
  const cpu = cpuPerRequest(before, cpuSnapshot(measured), result.requests);
  const counted = await counters.read();
  // Per request; the two readings' own statement and command are taken off.
  const perRequest = (n: number) => Math.round((Math.max(0, n - 1) / result.requests) * 100) / 100;
  return {
    id: s.id,
    label: s.label,
    ...result,
    // The total is the system's: every process but the load generator.
    cpuUs: { ...cpu, total: cpu.total! - cpu.loader! },
    roundTrips: {
      postgres: perRequest(counted.postgres - countedBefore.postgres),
      redis: perRequest(counted.redis - countedBefore.redis),
    },
  };
}

function scenarios(
  shape: Shape,
  data: BenchData,
  b0: string,
  b2: string,
  oidc: OidcBaseline,
  secret: string,
): Scenario[] {
  const bearer = data.accessToken;
  const record = (i: number) => `/v1/persons/${data.personIds[i]}/extensions/${data.extensionId}`;
  const context = {
    requestId: '',
    subjectType: 'person' as const,
    subjectId: data.tenant.personId,
    tenantId: data.tenant.tenantId,
    clientId: data.tenant.clientId,
    actorAccountId: data.tenant.accountId,
    scopes: ['svc.profile.self.read' as const],
  };
  const get = (
    path: string,
    headers: Record<string, string> = { authorization: `Bearer ${bearer}` },
  ): ScenarioSpec => ({ kind: 'fixed', request: { method: 'GET', path, headers } });
  return [
    { id: 'B0', label: 'bare node:http JSON', origin: b0, spec: get('/', {}) },
    {
      id: 'B1',
      label: 'backend GET /v1/me direct (signed context)',
      origin: shape.backendUrl,
      spec: { kind: 'signed', path: '/v1/me', secret, context },
    },
    { id: 'B2', label: 'bare proxy (gateway HTTP stack) -> backend', origin: b2, spec: get('/v1/me', {}) },
    {
      id: 'PDP',
      label: 'PDP decision alone',
      origin: shape.pdpUrl,
      spec: {
        kind: 'fixed',
        request: {
          method: 'POST',
          path: DECISION_PATH,
          headers: { 'content-type': 'application/json', [INTERNAL_SECRET_HEADER]: secret },
          body: JSON.stringify({
            requestId: 'bench-pdp',
            token: data.claims,
            capability: 'svc.profile.self.read',
            resource: { type: 'self' },
          }),
        },
      },
    },
    { id: 'R1', label: 'GET /v1/me through the gateway', origin: shape.gatewayUrl, spec: get('/v1/me') },
    {
      id: 'R1D',
      label: 'R1 with a DPoP-bound token, a proof per request',
      origin: shape.gatewayUrl,
      spec: {
        kind: 'dpop-get',
        origin: shape.gatewayUrl,
        path: '/v1/me',
        token: data.dpop.accessToken,
        privateJwk: data.dpop.privateJwk,
        publicJwk: data.dpop.publicJwk,
      },
    },
    { id: 'R2', label: 'GET one extension record through the gateway', origin: shape.gatewayUrl, spec: get(record(0)) },
    {
      id: 'W1',
      label: 'PUT If-Match, own record per connection',
      origin: shape.gatewayUrl,
      spec: {
        kind: 'own-record-put',
        bearer,
        paths: data.personIds.slice(0, -WRITE_MIX_PERSONS).map((_, i) => record(i)),
        etags: data.recordEtags,
      },
    },
    {
      id: 'K6R',
      label: 'read mix of api-read.k6.ts, replayed (not k6)',
      origin: shape.gatewayUrl,
      spec: { kind: 'read-mix', bearer, personId: data.personIds[0]!, extensionId: data.extensionId },
    },
    {
      id: 'K6W',
      label: 'write mix of api-write.k6.ts, replayed (not k6)',
      origin: shape.gatewayUrl,
      spec: {
        kind: 'write-mix',
        bearer,
        personIds: data.personIds.slice(-WRITE_MIX_PERSONS),
        extensionId: data.extensionId,
      },
    },
    {
      id: 'T1',
      label: 'refresh grants, issuer (tokens.k6.ts replayed)',
      origin: shape.authUrl,
      spec: { kind: 'refresh', path: '/oauth2/token', tokens: data.refreshTokens, clientId: data.tenant.clientId },
    },
    {
      id: 'T0',
      label: 'refresh grants, oidc-provider in-memory',
      origin: oidc.url,
      spec: { kind: 'refresh', path: '/token', tokens: oidc.tokens!, clientId: oidc.clientId },
    },
    {
      id: 'T1c',
      label: 'refresh grants, confidential client (Basic)',
      origin: shape.authUrl,
      spec: {
        kind: 'refresh',
        path: '/oauth2/token',
        tokens: data.machine.refreshTokens,
        clientId: data.machine.clientId,
        clientSecret: data.machine.clientSecret,
      },
    },
    {
      id: 'C1',
      label: 'client_credentials grants, Basic, issuer',
      origin: shape.authUrl,
      spec: clientCredentials('/oauth2/token', data.machine, MACHINE_SCOPE),
    },
    {
      id: 'C0',
      label: 'client_credentials, oidc-provider in-memory',
      origin: oidc.url,
      spec: clientCredentials('/token', oidc.machine!, 'read'),
    },
    {
      id: 'L1',
      label: 'password sign-ins (connected apps form)',
      origin: shape.authUrl,
      spec: {
        kind: 'fixed',
        status: 303,
        request: {
          method: 'POST',
          path: '/account/apps',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ username: data.tenant.username, password: data.tenant.password }).toString(),
        },
      },
    },
  ];
}

async function benchShape(
  name: string,
  env: ShapeEnv,
  b0: string,
  oidc: Awaited<ReturnType<typeof startBaseline>>,
  firstShape: Measurement[] = [],
): Promise<ShapeResult> {
  const shape = name === 'deployed' ? await startDeployed(env) : await startAllInOne(env);
  stopAll.push(() => shape.stop());
  const data = await prepare(shape, env.ADMIN_TOKEN, CONNECTIONS);
  const b2 = await startBaseline('proxy', {
    BACKEND_URL: shape.backendUrl,
    INTERNAL_SECRET: env.INTERNAL_SECRET,
    BENCH_PROXY_STATE: JSON.stringify({
      claims: data.claims,
      allow: {
        allow: true,
        subjectType: 'person',
        effectiveScopes: ['svc.profile.self.read'],
        rateLimit: { tenant: { points: 1, durationS: 1 }, account: { points: 1, durationS: 1 } },
      },
    }),
  });
  const processes: Measured[] = [
    ...shape.processes,
    ...children.filter((c) => c !== loader.child && c.name !== 'B2'),
    b2.child,
    ...stores,
  ];
  const measurements: Measurement[] = [];
  // The baselines that do not depend on the shape (B0, oidc-provider) and the k6 mixes are measured with the first.
  const first = name === SHAPES[0];
  const list = scenarios(shape, data, b0, b2.url, oidc, env.INTERNAL_SECRET).filter(
    (s) => (!ONLY || ['R1', 'B1', ...ONLY].includes(s.id)) && (first || !SHAPE_INDEPENDENT.has(s.id)),
  );
  // oidc-provider's refresh chains (T0) serve every shape; everything else belongs to this shape's data.
  const keyOf = (s: Scenario) => (s.id === 'T0' || s.id === 'C0' ? s.id : `${name}:${s.id}`);
  // Every path warmed before any is measured: a process's first load runs unoptimized code and V8 compiles it
  // meanwhile (on threads whose CPU is the process's), so the first scenario through a service (R1 for the gateway)
  // measured its warm-up; the sweep, measured after everything, did not, and the two R1/B2 figures differed by 40 %.
  if (WARMUP_S > 0)
    for (const s of list)
      await loader.run({
        key: keyOf(s),
        origin: s.origin,
        spec: s.spec,
        connections: CONNECTIONS,
        durationS: WARMUP_S,
      });
  for (const s of list) {
    measurements.push(await measure(keyOf(s), s, processes));
    console.error(`bench ${name}: ${s.id} ${measurements.at(-1)!.rps} req/s`);
  }
  const r1 = measurements.find((m) => m.id === 'R1')!;
  const rate = Math.max(1, Math.round(r1.rps / 2));
  const byId = Object.fromEntries(list.map((s) => [s.id, s]));
  const r1Half = await measure(
    keyOf(byId.R1!),
    { ...byId.R1!, id: 'R1@½', label: `R1 at ${rate} req/s (half its peak)` },
    processes,
    rate,
  );
  const b1Half = await measure(
    keyOf(byId.B1!),
    { ...byId.B1!, id: 'B1@½', label: `B1 at ${rate} req/s` },
    processes,
    rate,
  );
  measurements.push(r1Half, b1Half);
  // The first shape (the deployed one by default) also gets the targets: the sweep, batching at 64
  // connections, and B2 at R1's half rate for the tail.
  const targets = first && !ONLY ? await targetRuns(shape, byId, keyOf, processes, rate) : undefined;
  await b2.child.stop();
  await shape.stop();
  const judged = [...measurements, ...firstShape.filter((m) => SHAPE_INDEPENDENT.has(m.id))];
  return {
    // Ratios to a shape-independent baseline use the first shape's measurement of it.
    shape: name,
    measurements,
    ratios: ratiosOf(judged),
    perCore: perCore(measurements),
    addedLatencyMs: {
      rate,
      p50: Math.round((r1Half.p50 - b1Half.p50) * 100) / 100,
      p99: Math.round((r1Half.p99 - b1Half.p99) * 100) / 100,
    },
    ...(targets && { targets }),
  };
}

interface TracedR1 {
  /** The sampling ratio; null for the untraced baseline measured the same way. */
  sampling: number | null;
  /** Every round's measurements together: requests, rates and CPU summed over the rounds, latencies their median. */
  measurement: Measurement;
  /** Each round's own measurement, in order. */
  rounds: Measurement[];
  /** Spans the receiver got during the run. */
  spans: number;
}

/** Warm-up of each tracing run: as long as a measurement, so that fresh processes run optimized code when measured. */
const TRACE_WARMUP_S = Math.max(WARMUP_S, DURATION_S);
/**
 * Rounds of the tracing comparison. Each round measures the untraced shape and then each traced one back to back, so a
 * shared machine whose speed drifts over minutes (the load generator's own CPU per request moved by 2x between runs a
 * few minutes apart) moves both sides of a round's ratio alike; the ratio printed is the median of the rounds'.
 */
const TRACE_ROUNDS = Number(process.env.BENCH_TRACE_ROUNDS ?? 3);

interface TracedShape {
  sampling: number | null;
  shape: Shape;
  scenario: Scenario;
  key: string;
  receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
}

/**
 * R1's deployed shape for one sampling ratio, on a database of its own, prepared and warmed for TRACE_WARMUP_S: with
 * `sampling`, its services export traces (parent-based, that ratio of new traces) to an OTLP receiver in this process;
 * with null, tracing is off. The headline R1 ran on processes warmed by every scenario before it, which fresh processes
 * are not: each ratio is taken against an untraced shape made the same way.
 */
async function tracedShape(
  sampling: number | null,
  env: ShapeEnv,
  b0: string,
  oidc: Awaited<ReturnType<typeof startBaseline>>,
): Promise<TracedShape> {
  const receiver = await startOtlpReceiver({ keepSpans: false });
  stopAll.push(() => receiver.close());
  const name = sampling === null ? 'untraced' : `traced_${String(sampling).replace('.', '_')}`;
  const shape = await startDeployed({
    ...env,
    DATABASE_URL: await databaseFor(`deployed_${name}`),
    settings:
      sampling === null
        ? {}
        : {
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
            OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
            OTEL_TRACES_SAMPLER_ARG: String(sampling),
          },
  });
  stopAll.push(() => shape.stop());
  const data = await prepare(shape, env.ADMIN_TOKEN, CONNECTIONS, { refreshChains: false });
  const r1 = scenarios(shape, data, b0, b0, oidc, env.INTERNAL_SECRET).find((s) => s.id === 'R1')!;
  const key = `${name}:R1`;
  await loader.run({ key, origin: r1.origin, spec: r1.spec, connections: CONNECTIONS, durationS: TRACE_WARMUP_S });
  const label = sampling === null ? `${r1.label}, untraced` : `${r1.label}, traced (${sampling * 100}% sampled)`;
  return { sampling, shape, scenario: { ...r1, id: `R1 ${name}`, label }, key, receiver };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A shape's rounds as one measurement: counts and CPU over all of them, latencies their rounds' median. */
function mergedRounds(rounds: Measurement[]): Measurement {
  const requests = rounds.reduce((n, m) => n + m.requests, 0);
  const weighted = (of: (m: Measurement) => number) =>
    Math.round(rounds.reduce((sum, m) => sum + of(m) * m.requests, 0) / requests);
  const cpuUs = Object.fromEntries(Object.keys(rounds[0]!.cpuUs).map((k) => [k, weighted((m) => m.cpuUs[k]!)]));
  return {
    ...rounds[0]!,
    requests,
    rps: Math.round(rounds.reduce((sum, m) => sum + m.rps, 0) / rounds.length),
    p50: median(rounds.map((m) => m.p50)),
    p99: median(rounds.map((m) => m.p99)),
    cpuUs,
  };
}

/** R1 untraced and at each sampling ratio, measured in TRACE_ROUNDS interleaved rounds (see TRACE_ROUNDS). */
async function tracedR1(
  samplings: number[],
  env: ShapeEnv,
  b0: string,
  oidc: Awaited<ReturnType<typeof startBaseline>>,
): Promise<TracedR1[]> {
  const shapes: TracedShape[] = [];
  for (const sampling of [null, ...samplings]) shapes.push(await tracedShape(sampling, env, b0, oidc));
  const rounds: Measurement[][] = shapes.map(() => []);
  for (let round = 0; round < TRACE_ROUNDS; round++)
    for (const [i, t] of shapes.entries())
      rounds[i]!.push(await measure(t.key, t.scenario, [...t.shape.processes, ...stores]));
  const results = shapes.map((t, i) => ({
    sampling: t.sampling,
    measurement: mergedRounds(rounds[i]!),
    rounds: rounds[i]!,
    spans: t.receiver.received,
  }));
  for (const t of shapes) {
    await t.shape.stop();
    await t.receiver.close();
  }
  return results;
}

/** The gateway's decisions-per-PDP-call histogram, read from its metrics: its running sum and count. */
async function pdpCallCounts(shape: Shape): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(shape.gatewayMetricsUrl)).text();
  const value = (name: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`${name} `))
        ?.split(' ')[1] ?? NaN,
    );
  return { sum: value('gateway_pdp_decisions_per_call_sum'), count: value('gateway_pdp_decisions_per_call_count') };
}

async function targetRuns(
  shape: Shape,
  byId: Record<string, Scenario>,
  keyOf: (s: Scenario) => string,
  processes: Measured[],
  halfRate: number,
): Promise<TargetRuns> {
  const sweep: Measurement[] = [];
  let decisionsPerCall = NaN;
  for (const connections of SWEEP)
    for (const id of ['R1', 'B2']) {
      const s = byId[id]!;
      const before = id === 'R1' && connections === BATCH_CONNECTIONS ? await pdpCallCounts(shape) : undefined;
      const m = await measure(
        keyOf(s),
        { ...s, id: `${id} c=${connections}`, label: `${s.label}, ${connections} connections` },
        processes,
        undefined,
        connections,
      );
      sweep.push(m);
      console.error(`bench ${shape.name}: ${m.id} ${m.rps} req/s`);
      if (before) {
        const after = await pdpCallCounts(shape);
        decisionsPerCall = (after.sum - before.sum) / (after.count - before.count);
      }
    }
  const pdp = byId.PDP!;
  const pdpSingle = await measure(
    keyOf(pdp),
    { ...pdp, id: `PDP c=${BATCH_CONNECTIONS}`, label: `PDP decision alone, ${BATCH_CONNECTIONS} connections` },
    processes,
    undefined,
    BATCH_CONNECTIONS,
  );
  const b2 = byId.B2!;
  const b2Half = await measure(keyOf(b2), { ...b2, id: 'B2@½', label: `B2 at ${halfRate} req/s` }, processes, halfRate);
  return { sweep, decisionsPerCall, pdpSingle, b2Half };
}

try {
  const b0 = await startBaseline('bare');
  const oidc = await startBaseline('oidc', { BENCH_OIDC_CHAINS: String(CONNECTIONS) });
  const secret = randomBytes(32).toString('base64url');
  const adminToken = randomBytes(24).toString('base64url');
  const shapes: ShapeResult[] = [];
  for (const name of SHAPES)
    shapes.push(
      await benchShape(
        name,
        {
          DATABASE_URL: await databaseFor(name),
          REDIS_URL: redis.url,
          INTERNAL_SECRET: secret,
          ADMIN_TOKEN: adminToken,
        },
        b0.url,
        oidc,
        shapes[0]?.measurements,
      ),
    );
  // The cost of tracing: R1 traced against R1 untraced, each on fresh deployed processes warmed the same way.
  const traced: TracedR1[] = [];
  if (TRACE_SAMPLING.length) {
    const env = { REDIS_URL: redis.url, INTERNAL_SECRET: secret, ADMIN_TOKEN: adminToken, DATABASE_URL: '' };
    traced.push(...(await tracedR1(TRACE_SAMPLING, env, b0.url, oidc)));
    for (const t of traced) console.error(`bench deployed: R1 ${t.sampling ?? 'untraced'}: ${t.measurement.rps} req/s`);
  }
  const [untracedR1, ...tracedRuns] = traced;
  let extensions: LoopResult[] = [];
  let exports: ExportResult[] = [];
  if (EXTENSION_RECORDS > 0) {
    // In this process, on fresh databases of the private server (tests/support/database.ts reads DATABASE_URL).
    Object.assign(process.env, { DATABASE_URL: pg.url, REDIS_URL: redis.url });
    const systems = await extensionSystems(CONNECTIONS, DURATION_S);
    try {
      extensions = await benchExtensionRecords(...systems.setups, EXTENSION_RECORDS);
      // The same two tenants' records (1,000 and the large count), exported whole through the admin API.
      exports = [await benchExport(systems.setups[0]), await benchExport(systems.setups[1])];
    } finally {
      await systems.close();
    }
  }

  console.log(
    `\n${DURATION_S} s a target (after ${WARMUP_S} s warm-up), ${CONNECTIONS} connections, ` +
      'private PostgreSQL and Redis; latencies in ms',
  );
  for (const s of shapes) {
    printShape(s);
    printTokenFigures(s);
    printDpopFigures(s);
  }
  const judged = shapes.find((s) => s.targets);
  if (judged) printTargets(judged);
  for (const t of tracedRuns) {
    const [on, off] = [t.measurement, untracedR1!.measurement];
    const ratios = t.rounds.map((m, i) => m.rps / untracedR1!.rounds[i]!.rps);
    console.log(
      `R1 traced/R1 ${median(ratios).toFixed(2)}   ` +
        `(deployed, fresh processes warmed ${TRACE_WARMUP_S} s, parentbased_traceidratio ${t.sampling}; ` +
        `median of ${ratios.length} interleaved rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}; over them ` +
        `${on.rps} vs ${off.rps} req/s, CPU ${on.cpuUs.total} vs ${off.cpuUs.total} µs a request, ` +
        `p99 ${on.p99} vs ${off.p99} ms, ${t.spans} spans exported)`,
    );
  }
  if (extensions.length) {
    console.log(
      `\n== extension records, backend direct (in the bench process), 1,000 vs ${EXTENSION_RECORDS.toLocaleString('en')} records`,
    );
    for (const r of extensions)
      console.log(`${r.name.padEnd(36)} ${String(Math.round(r.rps)).padStart(7)} req/s  p50 ${r.p50}  p99 ${r.p99}`);
    for (const line of compareSizes(extensions)) console.log(line);
  }
  if (exports.length) {
    console.log('\n== export (admin API, NDJSON stream, in the bench process: server and reader)');
    for (const e of exports)
      console.log(
        `export ${e.records.toLocaleString('en').padStart(9)} records  ${e.seconds} s  ${e.recordsPerS} records/s  ` +
          `peak RSS ${e.peakRssMb} MB (+${e.rssRiseMb} MB)`,
      );
    const [small, large] = exports;
    console.log(
      `export peak RSS ${large!.records.toLocaleString('en')}/${small!.records.toLocaleString('en')} records ` +
        `${(large!.peakRssMb / small!.peakRssMb).toFixed(2)}`,
    );
  }
  const top = Number(process.env.BENCH_PG_TOP ?? 0);
  if (top > 0) console.table(await counters.top(top));
  const file = writeResults({
    settings: {
      durationS: DURATION_S,
      connections: CONNECTIONS,
      warmupS: WARMUP_S,
      extensionRecords: EXTENSION_RECORDS,
    },
    shapes,
    extensions,
    exports,
    traced: traced.map((t) => ({
      sampling: t.sampling,
      ...t.measurement,
      spans: t.spans,
      roundRps: t.rounds.map((m) => m.rps),
    })),
  });
  console.log(`\nresults: ${file}`);
  if (judged?.targets) console.log(`sweep chart: ${writeSweepChart(file, judged.targets.sweep, judged.shape)}`);
} finally {
  for (const stop of stopAll.reverse()) await stop().catch(() => undefined);
  await loader.child.stop();
  await counters.close();
  await redis.stop();
  await pg.stop();
}
