// What a run leaves behind (k6's handleSummary): the whole summary as JSON in a file, and a short text on stdout that
// says first whether the run passed, then each threshold with the value it was judged on, the failed checks, and
// every request metric. Pure functions of k6's summary data, so they are tested outside k6 (tests/repository/k6-tools.ts).

interface MetricSummary {
  type: 'counter' | 'gauge' | 'rate' | 'trend';
  contains?: 'default' | 'time' | 'data';
  values: Record<string, number>;
  thresholds?: Record<string, { ok: boolean }>;
}
interface CheckSummary {
  name: string;
  passes: number;
  fails: number;
}
interface GroupSummary {
  checks: CheckSummary[];
  groups: GroupSummary[];
}
export interface SummaryData {
  metrics: Record<string, MetricSummary>;
  root_group: GroupSummary;
  state: { testRunDurationMs: number };
}

const figure = (n: number) => (Number.isInteger(n) ? n.toLocaleString('en-US') : n.toFixed(n < 10 ? 2 : 1));

function valuesOf(metric: MetricSummary): string {
  const unit = metric.contains === 'time' ? ' ms' : '';
  const v = metric.values;
  switch (metric.type) {
    case 'trend':
      return Object.entries(v)
        .map(([stat, value]) => `${stat} ${figure(value)}${unit}`)
        .join(', ');
    case 'rate':
      return (
        `${(100 * (v.rate ?? 0)).toFixed(2)} % ` +
        `(${figure(v.passes ?? 0)} of ${figure((v.passes ?? 0) + (v.fails ?? 0))})`
      );
    case 'counter':
      return `${figure(v.count ?? 0)} (${figure(v.rate ?? 0)}/s)`;
    case 'gauge':
      return `${figure(v.value ?? 0)} (min ${figure(v.min ?? 0)}, max ${figure(v.max ?? 0)})`;
  }
}

function checksOf(group: GroupSummary): CheckSummary[] {
  return [...group.checks, ...group.groups.flatMap(checksOf)];
}

/** The text summary: verdict, thresholds, failed checks, metrics. */
export function textSummary(script: string, data: SummaryData): string {
  const judged = Object.entries(data.metrics).flatMap(([name, metric]) =>
    Object.entries(metric.thresholds ?? {}).map(([rule, { ok }]) => ({ name, rule, ok, metric })),
  );
  const crossed = judged.filter((t) => !t.ok);
  const checks = checksOf(data.root_group);
  const failedChecks = checks.filter((c) => c.fails > 0);
  const lines = [
    `${script}: ` +
      (crossed.length
        ? `FAILED, ${crossed.length} of ${judged.length} thresholds crossed`
        : `passed, ${judged.length} thresholds held`) +
      ` (${(data.state.testRunDurationMs / 1000).toFixed(1)} s)`,
    '',
    'thresholds:',
    ...judged.map((t) => `  ${t.ok ? 'ok     ' : 'CROSSED'} ${t.name}: ${t.rule}  [${valuesOf(t.metric)}]`),
    '',
    `checks: ${figure(checks.reduce((n, c) => n + c.passes, 0))} passed, ` +
      `${figure(checks.reduce((n, c) => n + c.fails, 0))} failed`,
    ...failedChecks.map((c) => `  failed ${figure(c.fails)} of ${figure(c.passes + c.fails)}: ${c.name}`),
    '',
    'metrics:',
    ...Object.entries(data.metrics)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, metric]) => `  ${name}: ${valuesOf(metric)}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** handleSummary's answer: the text on stdout and the JSON in `<dir>/k6-<script>-summary.json`. */
export function summaryFiles(script: string, dir: string, data: SummaryData): Record<string, string> {
  const file = `${dir}/k6-${script}-summary.json`;
  return {
    stdout: `${textSummary(script, data)}\nsummary written to ${file}\n`,
    [file]: JSON.stringify(data, null, 2),
  };
}
