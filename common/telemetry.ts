// What operators watch: Prometheus metrics (prom-client) and readiness, one set per process. Served on the process's
// management listener (common/management.ts), never on an API port, so the public gateway port exposes no internals
// (as Kong's status listener and Envoy's admin port keep them apart).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Knex } from 'knex';
import { callerOf, REQUEST_ID_HEADER } from './http.js';
import type { Logger } from './log.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { describeRequest, serverSpan, spansDropped, traceFields, unrecordedIds } from './tracing.js';

export type ServiceName = 'issuer' | 'policies' | 'gateway' | 'backend';
type Check = () => Promise<unknown>;

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
}

export interface Telemetry {
  registry: Registry;
  /**
   * A server 'request' listener that counts, times and logs every request of `service` by method, route template and
   * status. Registered before the app's own listener, it sees the route the app's router matched once it answers.
   * The log line (info) carries requestId, tenant, client, method, route, status and durationMs (and, traced, the
   * server span's trace_id and span_id): never the raw URL, whose query may hold an authorization code, nor any header.
   * The server span is named by the route template and carries the tenant and client (tracing.ts).
   */
  observe(service: ServiceName, log: Logger): (req: IncomingMessage, res: ServerResponse) => void;
  decisions: Counter<'outcome' | 'code'>;
  /** Decisions per gateway → PDP call (the gateway sends the decisions of concurrent requests together). */
  decisionsPerPdpCall: Histogram;
  /** Requests refused by a limit: layer tenant | account (gateway API layers), flood_guard, token_endpoint. */
  rateLimited: Counter<'layer'>;
  /** Tokens the issuer issued, by grant type (authorization_code, refresh_token, client_credentials). */
  tokensIssued: Counter<'grant_type'>;
  /** Token families ended because a used refresh token or authorization code was presented again. */
  familyKills: Counter<'reused'>;
  /** Database pool failures: a connection that could not be made (create) or had in time (acquire). */
  databasePoolErrors: Counter<'event'>;
  /** Errors reported by a Redis client (connection lost, refused, timed out). */
  redisErrors: Counter;
  /** Administrative changes committed with their audit entry, by action. */
  adminChanges: Counter<'action'>;
  /** Audit chain checks (GET /admin/v1/audit/verify), by result: ok, broken. */
  auditVerifications: Counter<'result'>;
  /**
   * Counts the pool failures of this database handle and exports its connections in use, free and waited for at each
   * scrape (once per handle, however many services share it).
   */
  watchDatabase(knex: Knex): void;
  /** Registers a batch whose unwritten rows are exported as `batch_backlog{batch}` at each scrape. */
  addBacklog(batch: string, pending: () => number): void;
  /** Registers a dependency that must answer for the process to be ready (database, Redis, key set). */
  addReadinessCheck(name: string, check: Check): void;
  /** The service listens and its dependencies are registered: until then the process reports unready. */
  started(): void;
  /** From now on the process reports unready (shutdown has begun), so load balancers stop sending to it. */
  drain(): void;
  readiness(): Promise<Readiness>;
}

const CHECK_TIMEOUT_MS = 1000;

/** What knex's pool (tarn) tells about itself. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  on(event: 'createFail' | 'acquireFail', listener: () => void): void;
}

/** Names the route of a request that no Express route matched (oidc-provider's own routes), for metrics and logs. */
export function noteRoute(res: ServerResponse, template: string): void {
  const withLocals = res as ServerResponse & { locals?: Record<string, unknown> };
  (withLocals.locals ??= {}).routeTemplate = template;
}

/**
 * The matched route's template, never the raw path: ids would make every person and tenant a new series. A router
 * mounted under a parameter (the console's /tenants/:tenantId) leaves its value in baseUrl; with mergeParams the
 * value is also a param, so it is put back as `:name`.
 */
function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

function routeTemplateOf(req: IncomingMessage, res: ServerResponse): string {
  const routed = req as IncomingMessage & {
    route?: { path?: unknown };
    baseUrl?: string;
    params?: Record<string, string>;
  };
  if (!routed.route?.path) return (res as { locals?: { routeTemplate?: string } }).locals?.routeTemplate ?? 'unmatched';
  // Most requests (the API's /v1/me, the PDP's decisions, the backend's routes under a fixed prefix) have no params, so
  // nothing in baseUrl can be one: the template is the two strings as they are.
  if (!routed.params || isEmpty(routed.params)) return `${routed.baseUrl ?? ''}${String(routed.route.path)}`;
  const params = Object.entries(routed.params);
  const base = (routed.baseUrl ?? '')
    .split('/')
    .map((segment) => {
      const param = params.find(([, value]) => value !== '' && encodeURIComponent(value) === segment);
      return param ? `:${param[0]}` : segment;
    })
    .join('/');
  return `${base}${String(routed.route.path)}`;
}

export function createTelemetry(): Telemetry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registry.registerMetric(spansDropped);
  const registers = [registry];
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by service, method, route template and status.',
    labelNames: ['service', 'method', 'route', 'status'],
    registers,
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by service, method, route template and status.',
    labelNames: ['service', 'method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  const checks = new Map<string, Check>();
  const databasePoolErrors = new Counter({
    name: 'database_pool_errors_total',
    help: 'Database connections that could not be created or acquired, by pool event (create, acquire).',
    labelNames: ['event'],
    registers,
  });
  const pools = new Set<TarnPool>();
  new Gauge({
    name: 'database_pool_connections',
    help: 'Database pool connections by state: used, free, pending (acquisitions waiting), max (the cap).',
    labelNames: ['state'],
    registers,
    collect() {
      const sum = (f: (p: TarnPool) => number) => [...pools].reduce((n, p) => n + f(p), 0);
      this.set(
        { state: 'used' },
        sum((p) => p.numUsed()),
      );
      this.set(
        { state: 'free' },
        sum((p) => p.numFree()),
      );
      this.set(
        { state: 'pending' },
        sum((p) => p.numPendingAcquires()),
      );
      this.set(
        { state: 'max' },
        sum((p) => p.max),
      );
    },
  });
  const backlogs = new Map<string, () => number>();
  new Gauge({
    name: 'batch_backlog',
    help: 'Rows recorded but not yet written, by batch (metering, decision_log).',
    labelNames: ['batch'],
    registers,
    collect() {
      for (const [batch, pending] of backlogs) this.set({ batch }, pending());
    },
  });
  let started = false;
  let draining = false;

  return {
    registry,
    observe: (service, log) => (req, res) => {
      const end = duration.startTimer();
      const span = serverSpan();
      // A request the sampler left out has no span, but its own ids (tracing.ts).
      const ids = span?.spanContext() ?? unrecordedIds(req);
      res.once('finish', () => {
        const route = routeTemplateOf(req, res);
        const labels = { service, method: req.method ?? 'GET', route, status: String(res.statusCode) };
        requests.inc(labels);
        const seconds = end(labels);
        const { tenant = null, client = null } = callerOf(res);
        const requestId = res.getHeader(REQUEST_ID_HEADER) ?? null;
        if (span) describeRequest(span, labels.method, route, tenant, client);
        log.info(
          {
            ...(ids && traceFields(ids)),
            requestId,
            tenant,
            client,
            method: labels.method,
            route,
            status: res.statusCode,
            durationMs: Math.round(seconds * 1e4) / 10,
          },
          'request',
        );
      });
    },
    decisions: new Counter({
      name: 'pdp_decisions_total',
      help: 'PDP decisions by outcome (allow, deny) and deny code.',
      labelNames: ['outcome', 'code'],
      registers,
    }),
    decisionsPerPdpCall: new Histogram({
      name: 'gateway_pdp_decisions_per_call',
      help: 'Decisions carried by each gateway call to the PDP.',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    }),
    rateLimited: new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests refused with 429, by limit layer (tenant, account, flood_guard, token_endpoint).',
      labelNames: ['layer'],
      registers,
    }),
    tokensIssued: new Counter({
      name: 'tokens_issued_total',
      help: 'Tokens issued by the token endpoint, by grant type.',
      labelNames: ['grant_type'],
      registers,
    }),
    familyKills: new Counter({
      name: 'token_family_kills_total',
      help: 'Token families ended on reuse detection, by what was reused (refresh_token, authorization_code).',
      labelNames: ['reused'],
      registers,
    }),
    databasePoolErrors,
    redisErrors: new Counter({ name: 'redis_errors_total', help: 'Errors reported by Redis clients.', registers }),
    adminChanges: new Counter({
      name: 'admin_changes_total',
      help: 'Administrative changes committed with their audit entry, by action (<resource>.<verb>).',
      labelNames: ['action'],
      registers,
    }),
    auditVerifications: new Counter({
      name: 'audit_chain_verifications_total',
      help: 'Audit chain checks (GET /admin/v1/audit/verify), by result: ok, broken.',
      labelNames: ['result'],
      registers,
    }),
    addBacklog: (batch, pending) => void backlogs.set(batch, pending),
    watchDatabase(knex) {
      const pool = (knex.client as { pool?: TarnPool }).pool;
      if (!pool || pools.has(pool)) return;
      pools.add(pool);
      pool.on('createFail', () => databasePoolErrors.inc({ event: 'create' }));
      pool.on('acquireFail', () => databasePoolErrors.inc({ event: 'acquire' }));
    },
    addReadinessCheck: (name, check) => void checks.set(name, check),
    started: () => void (started = true),
    drain: () => void (draining = true),
    async readiness() {
      const results = await Promise.all(
        [...checks].map(async ([name, check]) => {
          try {
            await Promise.race([
              check(),
              new Promise((_, reject) =>
                setTimeout(
                  () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)),
                  CHECK_TIMEOUT_MS,
                ).unref(),
              ),
            ]);
            return [name, 'ok'] as const;
          } catch (err) {
            return [name, (err as Error).message || 'failed'] as const;
          }
        }),
      );
      const outcome: Record<string, string> = Object.fromEntries(results);
      if (!started) outcome.startup = 'starting';
      if (draining) outcome.shutdown = 'draining';
      return { ready: started && !draining && results.every(([, r]) => r === 'ok'), checks: outcome };
    },
  };
}
