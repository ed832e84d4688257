// The Grafana dashboard and the Prometheus alert rules shipped in infra/ read metrics the code exports, under the
// names it exports them (read from the registry createTelemetry builds, not from a list kept here), cover what the
// issue asks of them, and the rules pass `promtool check rules` (Debian's prometheus package).
import { describe, it, expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { createTelemetry } from '../../common/telemetry.js';

describe('dashboards', () => {
  const path = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
  const DASHBOARD = path('infra/grafana/platform-dashboard.json');
  const RULES = path('infra/prometheus/platform-alerts.yaml');
  const PROMTOOL_INSTALL = 'apt-get install -y prometheus';

  /** Every series name the code exports: a histogram's as _bucket, _sum and _count. */
  async function exportedSeries(): Promise<Set<string>> {
    const metrics = await createTelemetry().registry.getMetricsAsJSON();
    return new Set(
      metrics.flatMap((m) =>
        String(m.type) === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => `${m.name}${s}`) : [m.name],
      ),
    );
  }

  /** The metric names a PromQL expression selects (each written with a selector: name{...}). */
  const metricsOf = (expr: string) => [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1]!);
  const family = (series: string) => series.replace(/_(bucket|sum|count)$/, '');

  interface Dashboard {
    panels: { title: string; targets: { expr: string }[] }[];
  }
  interface RuleFile {
    groups: { rules: { alert: string; expr: string }[] }[];
  }
  const dashboardExprs = () =>
    (JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard).panels.flatMap((p) => p.targets.map((t) => t.expr));
  const rules = () => (parse(readFileSync(RULES, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);

  describe('infra/grafana/platform-dashboard.json', () => {
    it('queries only metrics the code exports, and every one the issue names', async () => {
      const exported = await exportedSeries();
      const used = dashboardExprs().flatMap(metricsOf);
      expect(used.filter((m) => !exported.has(m))).toEqual([]);
      const families = new Set(used.map(family));
      for (const m of [
        'http_requests_total',
        'http_request_duration_seconds',
        'pdp_decisions_total',
        'gateway_pdp_decisions_per_call',
        'rate_limit_rejections_total',
        'tokens_issued_total',
        'database_pool_connections',
      ])
        expect(families).toContain(m);
    });
  });

  describe('infra/prometheus/platform-alerts.yaml', () => {
    it('alerts on error ratio, p99 latency, PDP unavailable, pool exhausted and audit chain, on exported metrics', async () => {
      const exported = await exportedSeries();
      const byAlert = Object.fromEntries(rules().map((r) => [r.alert, metricsOf(r.expr)]));
      expect(
        Object.values(byAlert)
          .flat()
          .filter((m) => !exported.has(m)),
      ).toEqual([]);
      expect(byAlert).toMatchObject({
        PlatformHighErrorRatio: expect.arrayContaining(['http_requests_total']),
        PlatformHighLatencyP99: expect.arrayContaining(['http_request_duration_seconds_bucket']),
        PdpUnavailable: expect.arrayContaining(['gateway_pdp_decisions_per_call_sum', 'pdp_decisions_total']),
        DatabasePoolExhausted: expect.arrayContaining(['database_pool_errors_total', 'database_pool_connections']),
        AuditChainVerificationFailing: ['audit_chain_verifications_total'],
      });
    });

    it('passes promtool check rules', () => {
      const run = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
      if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
        throw new Error(`promtool is not installed; install it with: ${PROMTOOL_INSTALL}`);
      expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS: 6 rules found');
      expect(run.status).toBe(0);
    });
  });
});
