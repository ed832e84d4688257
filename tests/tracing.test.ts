// OpenTelemetry traces from real processes (each service its own `node --import tsx <service>/main.ts`, as deployed)
// to an OTLP receiver this suite starts: the gateway and the backend export http/json, the PDP and the issuer
// http/protobuf (each decoded its own way by the receiver). One API call is one trace across the processes; the
// request's log lines carry its trace id; a collector that hangs or is gone costs the calls nothing and the dropped
// spans are counted; with no endpoint configured no OpenTelemetry SDK or exporter module is even loaded.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_GATEWAY_FILE } from '../gateway/gateway-file.js';
import { adminClient, setupMachineClient, type MachineClientSetup } from './support/admin.js';
import { realPostgresDatabase } from './support/database.js';
import { clientCredentialsToken } from './support/oauth.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import {
  Child,
  freePort,
  freePorts,
  nodeEntry,
  startProcesses,
  waitFor,
  type ProcessSystem,
} from './support/processes.js';

const SERVER = 2;
const PROTOCOLS: Record<string, string> = {
  gateway: 'http/json',
  backend: 'http/json',
  policies: 'http/protobuf',
  issuer: 'http/protobuf',
};
const SCOPE = 'svc.tenant.info.read';
const GATEWAY_RATIO = 0.5;
/** Loader hooks that list the @opentelemetry modules a process resolves (tests/support/resolved-modules.mjs). */
const RESOLVED_MODULES_HOOK = ['--import', './tests/support/resolved-modules.mjs'];

let database: { url: string; drop(): Promise<void> };
let receiver: OtlpReceiver;
let system: ProcessSystem;
let tenant: MachineClientSetup;
let token: string;
const scratch = mkdtempSync(join(tmpdir(), 'tp-tracing-'));
const resolvedBy = (service: string) => join(scratch, `${service}.modules`);

beforeAll(async () => {
  database = await realPostgresDatabase();
  receiver = await startOtlpReceiver();
  const protocol = (p: string) => ({ OTEL_EXPORTER_OTLP_PROTOCOL: p });
  system = await startProcesses({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL,
    nodeArgs: RESOLVED_MODULES_HOOK,
    settings: {
      ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      // Spans reach the receiver a fifth of a second after they end; the queue holds 64 (the collector-down test).
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BSP_MAX_QUEUE_SIZE: '64',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64',
    },
    serviceSettings: {
      // The gateway, where calls come in, records half of the new traces; the others follow their caller's flag (the
      // default sampler, parent-based): a call the gateway leaves out must reach them flagged unsampled.
      gateway: {
        ...protocol(PROTOCOLS.gateway!),
        RESOLVED_MODULES_FILE: resolvedBy('gateway'),
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: String(GATEWAY_RATIO),
      },
      backend: protocol(PROTOCOLS.backend!),
      policies: protocol(PROTOCOLS.policies!),
      issuer: protocol(PROTOCOLS.issuer!),
    },
  });
  tenant = await setupMachineClient(adminClient(system), { grant: [SCOPE] });
  token = await clientCredentialsToken(system.authUrl, tenant, SCOPE);
}, 180_000);

afterAll(async () => {
  await system?.close();
  await receiver?.close();
  await database?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const call = (headers: Record<string, string> = {}) =>
  fetch(`${system.baseUrl}/tenant`, { headers: { authorization: `Bearer ${token}`, ...headers } });
const spansOf = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
const serverSpan = (spans: ReceivedSpan[], service: string) =>
  spans.find((s) => s.kind === SERVER && s.attributes['platform.service'] === service);

/** Waits until the trace holds a server span of each of the gateway, the PDP and the backend. */
async function untilTraced(traceId: string): Promise<ReceivedSpan[]> {
  await waitFor(`trace ${traceId} from gateway, policies and backend`, () =>
    ['gateway', 'policies', 'backend'].every((s) => serverSpan(spansOf(traceId), s)),
  );
  return spansOf(traceId);
}

describe('one API call is one trace across the gateway, the PDP and the backend', () => {
  it("continues the caller's traceparent: the gateway's, PDP's and backend's server spans and a database span", async () => {
    const [traceId, callerSpan] = [hex(16), hex(8)];
    const res = await call({ traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(res.status).toBe(200);
    const spans = await untilTraced(traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));

    const gateway = serverSpan(spans, 'gateway')!;
    expect(gateway.parentSpanId).toBe(callerSpan);
    expect(gateway.service).toBe('gateway');
    expect(gateway.name).toBe('GET /v1/tenant');
    expect(gateway.attributes).toMatchObject({
      'http.route': '/v1/tenant',
      'http.response.status_code': 200,
      'tenant.id': tenant.tenantId,
      'client.id': tenant.clientId,
    });
    // The plugins' work is in the gateway's trace: token verification, the rate limiter, the PDP call. The others
    // (cors, the flood guard, the body limit, metering, the limiter's screen) are no span of their own by default
    // (the gateway file's tracing.pluginSpans).
    const pluginSpans = spans.filter((s) => s.service === 'gateway' && s.name.startsWith('gateway '));
    expect(pluginSpans.map((s) => s.name).sort()).toEqual([
      'gateway authorize',
      'gateway rate-limit',
      'gateway verify-token',
    ]);
    for (const span of pluginSpans) expect(span.parentSpanId).toBe(gateway.spanId);

    // With Redis, the limiter's commands are in its span (ioredis instrumentation); without, it counts in process.
    const limiter = spans.find((s) => s.name === 'gateway rate-limit')!;
    const redisCommands = spans.filter(
      (s) => s.parentSpanId === limiter.spanId && s.attributes['db.system.name'] === 'redis',
    );
    expect(redisCommands.length > 0).toBe(Boolean(process.env.REDIS_URL));

    // Every span of the trace hangs from another span of it, up to the caller's.
    for (const span of spans) expect(byId.has(span.parentSpanId) || span.parentSpanId === callerSpan).toBe(true);

    const pdp = serverSpan(spans, 'policies')!;
    expect(pdp.service).toBe('policies');
    expect(pdp.name).toBe('POST /internal/v1/decisions/batch');
    // The batch span links to each member request's span (here one, also its parent's parent).
    expect(pdp.links).toEqual([{ traceId, spanId: expect.any(String) }]);
    expect(byId.get(pdp.links[0]!.spanId)?.name).toBe('gateway authorize');
    const decision = spans.find((s) => s.name === 'pdp decision')!;
    expect(decision.attributes).toMatchObject({
      'pdp.decision': 'allow',
      'pdp.capability': SCOPE,
      'platform.service': 'policies',
    });

    const backend = serverSpan(spans, 'backend')!;
    expect(backend.service).toBe('backend');
    const statements = spans.filter((s) => s.attributes['db.system.name'] ?? s.attributes['db.system']);
    expect(statements.some((s) => s.attributes['platform.service'] === 'backend')).toBe(true);
    expect(statements.some((s) => s.attributes['platform.service'] === 'policies')).toBe(true);
    // Each service's spans came in its own protocol: the gateway's and the backend's as JSON, the PDP's (and the
    // issuer's, whose key set the gateway may fetch within the call) as protobuf.
    for (const span of spans)
      expect(`${span.service} ${span.protocol}`).toBe(`${span.service} ${PROTOCOLS[span.service]}`);
    // Never a token: no attribute of any span holds the access token or any part of it.
    const signature = token.split('.')[2]!;
    expect(JSON.stringify(spans)).not.toContain(signature);

    // The request's log lines carry the trace id and their server span's id, in each service.
    for (const service of ['gateway', 'policies', 'backend'] as const) {
      const line = await waitForLine(service, `"trace_id":"${traceId}"`);
      expect(JSON.parse(line).span_id).toBe(serverSpan(spans, service)!.spanId);
    }
  });

  it('starts a trace for a call without a traceparent when the sampler takes its new trace id, and no trace anywhere when it does not', async () => {
    // One after another: concurrent calls could share a PDP call, which carries one of their trace ids.
    const calls: Record<string, string>[] = [];
    for (let n = 0; n < 16; n++) {
      const res = await call();
      expect(res.status).toBe(200);
      const requestId = res.headers.get('x-request-id')!;
      calls.push(JSON.parse(await waitForLine('gateway', `"requestId":"${requestId}"`)));
    }
    // The sampler was asked once, on the trace id the gateway's line carries and its span would carry: the SDK's own
    // ratio sampler, asked here about that id, says which calls are traced.
    const ratio = new tracing.TraceIdRatioBasedSampler(GATEWAY_RATIO);
    const sampled = (traceId: string) =>
      ratio.shouldSample(ROOT_CONTEXT, traceId).decision === tracing.SamplingDecision.RECORD_AND_SAMPLED;
    const traced = calls.filter((line) => sampled(line.trace_id!));
    const left = calls.filter((line) => !sampled(line.trace_id!));
    expect(traced.length > 0 && left.length > 0).toBe(true);
    for (const line of traced) {
      const gateway = serverSpan(await untilTraced(line.trace_id!), 'gateway')!;
      expect(gateway.parentSpanId).toBe('');
      expect(gateway.spanId).toBe(line.span_id);
    }
    // A call made after them all is exported; by then the ones left out would have been too.
    const after = hex(16);
    expect((await call({ traceparent: `00-${after}-${hex(8)}-01` })).status).toBe(200);
    await untilTraced(after);
    for (const line of left) {
      expect(line.trace_flags).toBe('00');
      expect(spansOf(line.trace_id!)).toEqual([]);
      // The PDP and the backend (whose own sampler would record a call without a caller) got the gateway's trace id,
      // flagged unsampled: their request lines carry it and they recorded nothing.
      for (const service of ['policies', 'backend'] as const) {
        const own = JSON.parse(await waitForLine(service, `"trace_id":"${line.trace_id}"`)) as Record<string, string>;
        expect(own.span_id).toMatch(/^[0-9a-f]{16}$/);
        expect(own.trace_flags).toBe('00');
      }
    }
  });

  it("records nothing for a caller's trace that is not sampled (the parent-based sampler), and logs its trace id", async () => {
    const traceId = hex(16);
    expect((await call({ traceparent: `00-${traceId}-${hex(8)}-00` })).status).toBe(200);
    // A sampled call made after it is exported; by then the unsampled one would have been too.
    const after = hex(16);
    expect((await call({ traceparent: `00-${after}-${hex(8)}-01` })).status).toBe(200);
    await untilTraced(after);
    expect(spansOf(traceId)).toEqual([]);
    for (const service of ['gateway', 'policies', 'backend'] as const)
      expect(JSON.parse(await waitForLine(service, `"trace_id":"${traceId}"`)).trace_flags).toBe('00');
  });

  it('traces the issuer: its token endpoint', async () => {
    await clientCredentialsToken(system.authUrl, tenant, SCOPE);
    await waitFor('an issuer token span', () =>
      receiver.spans.some((s) => s.service === 'issuer' && s.kind === SERVER && s.name === 'POST /oauth2/token'),
    );
  });

  it("links the PDP's batch span to every member request's trace when concurrent calls share a call", async () => {
    const traceIds = Array.from({ length: 12 }, () => hex(16));
    const answers = await Promise.all(traceIds.map((t) => call({ traceparent: `00-${t}-${hex(8)}-01` })));
    expect(answers.map((a) => a.status)).toEqual(traceIds.map(() => 200));
    for (const t of traceIds)
      await waitFor(`the PDP span serving ${t}`, () =>
        receiver.spans.some(
          (s) => s.kind === SERVER && s.service === 'policies' && s.links.some((l) => l.traceId === t),
        ),
      );
    // The gateway's sampler records half of the new traces, but a batch is never a new trace: each batch span that
    // served these calls is in the trace of one of them.
    const batches = receiver.spans.filter(
      (s) => s.name === 'gateway pdp batch' && s.links.some((l) => traceIds.includes(l.traceId)),
    );
    for (const batch of batches) expect(traceIds).toContain(batch.traceId);
  });

  it('records a decision span only for the members whose own request is sampled, also in a shared batch', async () => {
    const sampled = Array.from({ length: 8 }, () => hex(16));
    const unsampled = Array.from({ length: 8 }, () => hex(16));
    const answers = await Promise.all(
      sampled.flatMap((t, i) => [
        call({ traceparent: `00-${t}-${hex(8)}-01` }),
        call({ traceparent: `00-${unsampled[i]}-${hex(8)}-00` }),
      ]),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    // Each sampled call's decision is one span, in the trace of a sampled call (its own or its batch's first member);
    // the unsampled calls' decisions, made in the same batches, are in no trace. A call traced after them all is
    // exported after them.
    const after = hex(16);
    expect((await call({ traceparent: `00-${after}-${hex(8)}-01` })).status).toBe(200);
    await untilTraced(after);
    const decisions = receiver.spans.filter((s) => s.name === 'pdp decision' && sampled.includes(s.traceId));
    expect(decisions).toHaveLength(sampled.length);
    for (const t of unsampled) expect(spansOf(t)).toEqual([]);
  });
});

/** The request log line of `service` that holds `text` (lines are written in batches, up to 500 ms late). */
async function waitForLine(service: 'gateway' | 'policies' | 'backend', text: string): Promise<string> {
  let line: string | undefined;
  await waitFor(`${service} request line with ${text}`, () => {
    line = system.services[service].output.split('\n').find((l) => l.includes(text) && l.includes('"msg":"request"'));
    return line !== undefined;
  });
  return line!;
}

const droppedSpans = async (service: string) => {
  const text = await (await fetch(`${system.managementUrls[service as 'gateway']}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('tracing_spans_dropped_total{'))
    .map((l) => ({ reason: /reason="([^"]*)"/.exec(l)![1]!, count: Number(l.split(' ').pop()) }));
};

describe('a collector that hangs or is gone', () => {
  it('never fails a call; the bounded queue drops spans and counts them', async () => {
    receiver.hang();
    // Every call sampled (the caller's flag), so their spans certainly overflow the queue of 64: left to the gateway's
    // 50 % sampler, the calls without Redis (5-6 gateway spans each since only three plugins are spans) could fit in
    // the queue and the one export in flight.
    const hung = await Promise.all(
      Array.from({ length: 40 }, () => call({ traceparent: `00-${hex(16)}-${hex(8)}-01` })),
    );
    expect(hung.map((r) => r.status)).toEqual(hung.map(() => 200));
    await waitFor('queue_full drops counted', async () =>
      (await droppedSpans('gateway')).some((d) => d.reason === 'queue_full' && d.count > 0),
    );

    await receiver.close();
    const gone = await Promise.all(
      Array.from({ length: 10 }, () => call({ traceparent: `00-${hex(16)}-${hex(8)}-01` })),
    );
    expect(gone.map((r) => r.status)).toEqual(gone.map(() => 200));
    // Failed exports are counted by their error, beside the queue's drops.
    await waitFor('failed exports counted', async () =>
      (await droppedSpans('backend')).some((d) => d.reason !== 'queue_full' && d.count > 0),
    );
  }, 90_000);
});

describe('npm start: the four services in one process', () => {
  it("says which service made each span (platform.service) under the one resource; the gateway file's pluginSpans: all; exports nothing but traces", async () => {
    const collector = await startOtlpReceiver();
    // Every plugin a span of its own: the call without a token passes cors and is refused by verify-token.
    const gatewayFile = join(scratch, 'all-plugin-spans.yaml');
    writeFileSync(
      gatewayFile,
      readFileSync(DEFAULT_GATEWAY_FILE, 'utf8').replace(/^  pluginSpans: .*$/m, '  pluginSpans: all'),
    );
    const [issuer, policies, backend, gateway] = (await freePorts(4)) as [number, number, number, number];
    const url = (port: number) => `http://127.0.0.1:${port}`;
    const all = new Child('npm start', ...nodeEntry('infra/start.ts'), {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        ISSUER_PORT: String(issuer),
        AUTH_URL: url(issuer),
        PDP_PORT: String(policies),
        BACKEND_PORT: String(backend),
        GATEWAY_PORT: String(gateway),
        ADMIN_TOKEN: system.adminToken,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '200',
        GATEWAY_CONFIG: gatewayFile,
      },
      readyLine: /is up/,
    });
    await all.start();
    try {
      const answers = await Promise.all([
        fetch(`${url(gateway)}/v1/tenant`),
        fetch(`${url(issuer)}/.well-known/openid-configuration`),
        fetch(`${url(policies)}/admin/v1/tenants`, { headers: { authorization: `Bearer ${system.adminToken}` } }),
      ]);
      expect(answers.map((a) => a.status)).toEqual([401, 200, 200]);
      const servers = () =>
        new Set(collector.spans.filter((s) => s.kind === SERVER).map((s) => s.attributes['platform.service']));
      await waitFor('server spans of the gateway, issuer and PDP', () =>
        ['gateway', 'issuer', 'policies'].every((s) => servers().has(s)),
      );
      expect(new Set(collector.spans.map((s) => s.service))).toEqual(new Set(['integration-platform']));
      // The PDP's statements say so too, from their parent.
      const statements = collector.spans.filter((s) => s.attributes['db.system.name'] ?? s.attributes['db.system']);
      expect(statements.map((s) => s.attributes['platform.service'])).toContain('policies');
      await waitFor("the gateway call's cors and verify-token spans", () =>
        ['gateway cors', 'gateway verify-token'].every((name) => collector.spans.some((s) => s.name === name)),
      );
    } finally {
      await all.stop();
      await collector.close();
    }
    // Only traces are exported, up to the last flush at the stop: metrics stay Prometheus (no OTLP metrics exporter,
    // which NodeSDK would otherwise start by default and send to the same endpoint).
    expect(new Set(collector.paths)).toEqual(new Set(['POST /v1/traces']));
  });
});

describe('tracing off', () => {
  it('loads the OpenTelemetry SDK and exporter only when an endpoint is configured', async () => {
    // The gateway above, with an endpoint: the SDK and the exporter its protocol names were loaded (the check sees them).
    const traced = readFileSync(resolvedBy('gateway'), 'utf8');
    expect(traced).toContain('/@opentelemetry/sdk-node/');
    expect(traced).toContain('/@opentelemetry/exporter-trace-otlp-http/');

    // The backend alone, with every other OTEL_ setting but no endpoint: nothing but the API is loaded.
    const port = await freePort();
    const file = resolvedBy('untraced-backend');
    const backend = new Child('backend', ...nodeEntry('backend/main.ts', [], RESOLVED_MODULES_HOOK), {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        INTERNAL_SECRET: system.internalSecret,
        BACKEND_PORT: String(port),
        LOG_LEVEL: 'info',
        RESOLVED_MODULES_FILE: file,
        OTEL_SERVICE_NAME: 'backend',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_TRACES_SAMPLER: 'always_on',
      },
      readyLine: /"msg":"backend listening"/,
    });
    await backend.start();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/tenant`, {
        headers: { traceparent: `00-${hex(16)}-${hex(8)}-01` },
      });
      await res.body?.cancel();
      const loaded = new Set(
        readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((url) => /\/node_modules\/(@opentelemetry\/[^/]+)\//.exec(url)![1]),
      );
      expect([...loaded]).toEqual(['@opentelemetry/api']);
      expect(backend.output).not.toContain('trace_id');
    } finally {
      await backend.stop();
    }
  });
});
