// What operators watch: Prometheus metrics (prom-client) and readiness, one set per process. Served on the process's
// management listener (common/management.ts), never on an API port, so the public gateway port exposes no internals
// (as Kong's status listener and Envoy's admin port keep them apart).
import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ServiceName = 'issuer' | 'policies' | 'gateway' | 'backend';
type Check = () => Promise<unknown>;

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
}

export interface Telemetry {
  registry: Registry;
  /** Counts and times every request of `service` by method, route template and status. */
  http(service: ServiceName): RequestHandler;
  decisions: Counter<'outcome' | 'code'>;
  rateLimitRejections: Counter<'layer'>;
  tokensIssued: Counter<'grant'>;
  refreshFamilyKills: Counter<never>;
  dependencyErrors: Counter<'service' | 'dependency'>;
  /** Items waiting in an off-request-path batch (decision log, metering). */
  backlog: Gauge<'queue'>;
  /** Registers a dependency that must answer for the process to be ready (database, Redis, key set). */
  addReadinessCheck(name: string, check: Check): void;
  /** From now on the process reports unready (shutdown has begun), so load balancers stop sending to it. */
  drain(): void;
  readiness(): Promise<Readiness>;
}

const CHECK_TIMEOUT_MS = 1000;

export function createTelemetry(): Telemetry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by service, method, route template and status.', labelNames: ['service', 'method', 'route', 'status'], registers });
  const duration = new Histogram({
    name: 'http_request_duration_seconds', help: 'Time to answer an HTTP request, by service, method, route template and status.',
    labelNames: ['service', 'method', 'route', 'status'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers,
  });
  const checks = new Map<string, Check>();
  let draining = false;

  return {
    registry,
    http: (service) => (req, res, next) => {
      const end = duration.startTimer();
      res.once('finish', () => {
        // The matched route's template (never the raw path: ids would make every person a new series).
        const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
        const labels = { service, method: req.method, route, status: String(res.statusCode) };
        requests.inc(labels);
        end(labels);
      });
      next();
    },
    decisions: new Counter({ name: 'pdp_decisions_total', help: 'PDP decisions by outcome (allow, deny) and deny code.', labelNames: ['outcome', 'code'], registers }),
    rateLimitRejections: new Counter({ name: 'gateway_rate_limit_rejections_total', help: 'Requests refused with 429, by the layer that refused.', labelNames: ['layer'], registers }),
    tokensIssued: new Counter({ name: 'issuer_tokens_issued_total', help: 'Access tokens issued, by grant type.', labelNames: ['grant'], registers }),
    refreshFamilyKills: new Counter({ name: 'issuer_refresh_family_kills_total', help: 'Refresh-token families ended because a consumed token was replayed.', registers }),
    dependencyErrors: new Counter({ name: 'dependency_errors_total', help: 'Failed calls to a dependency (database pool, Redis, PDP, backend, key set), by service.', labelNames: ['service', 'dependency'], registers }),
    backlog: new Gauge({ name: 'batch_backlog', help: 'Items waiting to be written by a background batch, by queue.', labelNames: ['queue'], registers }),
    addReadinessCheck: (name, check) => void checks.set(name, check),
    drain: () => void (draining = true),
    async readiness() {
      const results = await Promise.all([...checks].map(async ([name, check]) => {
        try {
          await Promise.race([check(), new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS).unref())]);
          return [name, 'ok'] as const;
        } catch (err) {
          return [name, (err as Error).message || 'failed'] as const;
        }
      }));
      const outcome: Record<string, string> = Object.fromEntries(results);
      if (draining) outcome.shutdown = 'draining';
      return { ready: !draining && results.every(([, r]) => r === 'ok'), checks: outcome };
    },
  };
}
