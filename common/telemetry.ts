// What operators watch: Prometheus metrics (prom-client) and readiness, one set per process. Served on the process's
// management listener (common/management.ts), never on an API port, so the public gateway port exposes no internals
// (as Kong's status listener and Envoy's admin port keep them apart).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ServiceName = 'issuer' | 'policies' | 'gateway' | 'backend';
type Check = () => Promise<unknown>;

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
}

export interface Telemetry {
  registry: Registry;
  /**
   * A server 'request' listener that counts and times every request of `service` by method, route template and
   * status. Registered before the app's own listener, it sees the route the app's router matched once it answers.
   */
  observe(service: ServiceName): (req: IncomingMessage, res: ServerResponse) => void;
  decisions: Counter<'outcome' | 'code'>;
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
    observe: (service) => (req, res) => {
      const end = duration.startTimer();
      res.once('finish', () => {
        // The matched route's template (never the raw path: ids would make every person a new series).
        const routed = req as IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };
        const route = routed.route?.path ? `${routed.baseUrl ?? ''}${String(routed.route.path)}` : 'unmatched';
        const labels = { service, method: req.method ?? 'GET', route, status: String(res.statusCode) };
        requests.inc(labels);
        end(labels);
      });
    },
    decisions: new Counter({ name: 'pdp_decisions_total', help: 'PDP decisions by outcome (allow, deny) and deny code.', labelNames: ['outcome', 'code'], registers }),
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
