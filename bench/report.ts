// `npm run bench`: the ratios the issue's targets are stated in, the table on stdout, the JSON in bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { LoadResult } from './loader.js';
import { sweepChartSvg, sweepPoints } from './sweep-chart.js';

export interface Measurement extends LoadResult {
  id: string;
  label: string;
  /** µs of CPU per request of each process, and `total` over the system's processes (the load generator excluded). */
  cpuUs: Record<string, number>;
  /** PostgreSQL statements and Redis commands per request (over every process, batches shared out). */
  roundTrips: { postgres: number; redis: number };
}

export interface ShapeResult {
  shape: string;
  measurements: Measurement[];
  ratios: Record<string, number>;
  /** R1 − B1 at half of R1's peak rate, both at that fixed rate. */
  addedLatencyMs: { rate: number; p50: number; p99: number };
  /** The runs issue 19's targets are judged by (the first shape only). */
  targets?: TargetRuns;
  /** Issue 32: grants (C1) and password sign-ins (L1) per core, from their CPU per request (perCore). */
  perCore?: Record<string, number>;
}

export interface TargetRuns {
  /** R1 and B2 at each connection count of the sweep (ids `R1 c=<n>`, `B2 c=<n>`). */
  sweep: Measurement[];
  /** Mean decisions per gateway → PDP call during R1 at 64 connections (the gateway's histogram). */
  decisionsPerCall: number;
  /** The PDP's single-decision endpoint alone at 64 connections: its CPU per decision unbatched. */
  pdpSingle: Measurement;
  /** B2 at R1's half rate, for the tail ratio. */
  b2Half: Measurement;
}

const byId = (ms: Measurement[], id: string) => ms.find((m) => m.id === id);

/** The ratios of the issue, where both sides were measured. */
export function ratiosOf(ms: Measurement[]): Record<string, number> {
  const pairs = [
    ['R1', 'B2'],
    ['R1', 'B1'],
    ['R2', 'B1'],
    ['W1', 'B1'],
    ['T1', 'T0'],
    ['C1', 'C0'],
    ['T1c', 'T1'],
  ] as const;
  const out: Record<string, number> = {};
  for (const [a, b] of pairs) {
    const x = byId(ms, a);
    const y = byId(ms, b);
    const baseline = b === 'T0' || b === 'C0' ? 'oidc-provider' : b;
    if (x && y) out[`${a}/${baseline}`] = Math.round((x.rps / y.rps) * 1000) / 1000;
  }
  return out;
}

/**
 * The processes a token or a sign-in costs: the issuer and the stores it uses (the gateway and the PDP take no part);
 * in the all-in-one shape the issuer is the one process of all four services.
 */
const ISSUER_SIDE = ['issuer', 'all-in-one', 'postgres', 'redis'];

/**
 * Requests of `id` one core answers a second: 1,000,000 / CPU µs per request of the issuer, PostgreSQL and Redis
 * (issue 32's "C1 grants per core", "L1 sign-ins per core").
 */
export function perCore(ms: Measurement[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const id of ['C1', 'L1']) {
    const m = byId(ms, id);
    const us = m && ISSUER_SIDE.reduce((sum, name) => sum + (m.cpuUs[name] ?? 0), 0);
    if (us) out[id] = Math.round(1_000_000 / us);
  }
  return out;
}

/** Issue 32's token figures, one `<label> <number>` line each, then each beside its target or reference. */
export function printTokenFigures(r: ShapeResult): void {
  const lines: [label: string, value: number | undefined, digits: number, target: string][] = [
    ['C1/oidc-provider', r.ratios['C1/oidc-provider'], 2, 'target ≥ 0.3'],
    ['C1 grants per core', r.perCore?.C1, 0, "target ≥ 480 (4× Keycloak's 120 client-credential grants/s/vCPU)"],
    ['T1/oidc-provider', r.ratios['T1/oidc-provider'], 2, 'target ≥ 0.3'],
    ['T1c/T1', r.ratios['T1c/T1'], 2, 'target ≥ 0.8'],
    ['L1 sign-ins per core', r.perCore?.L1, 0, "Keycloak's sizing guide: 15 password logins/s/vCPU (scrypt by design)"],
  ];
  const measured = lines.filter(([, value]) => value !== undefined);
  if (!measured.length) return;
  console.log(`\n== issue 32 token figures (${r.shape} shape)`);
  for (const [label, value, digits] of measured) console.log(`${label} ${value!.toFixed(digits)}`);
  for (const [label, value, digits, target] of measured)
    console.log(`${label.padEnd(22)} ${value!.toFixed(digits).padStart(8)}  ${target}`);
}

/** The gateway's share of a request's CPU: its own process, or the one process of the all-in-one shape. */
const gatewayCpuUs = (m: Measurement) => m.cpuUs.gateway ?? m.cpuUs['all-in-one'];

/**
 * Issue 49: R1 with a DPoP-bound token and a fresh proof per request against R1 with a bearer token, same run, same
 * connections; and the gateway's CPU per request for both (the proof's verification is gateway work).
 */
export function printDpopFigures(r: ShapeResult): void {
  const [dpop, bearer] = [byId(r.measurements, 'R1D'), byId(r.measurements, 'R1')];
  if (!dpop || !bearer) return;
  const ratio = dpop.rps / bearer.rps;
  console.log(`\n== issue 49 DPoP figures (${r.shape} shape)`);
  console.log(`R1 DPoP/R1 ${ratio.toFixed(2)}   target ≥ 0.85 ${ratio >= 0.85 ? 'met' : 'NOT MET'}`);
  console.log(
    `gateway CPU µs per request: R1 DPoP ${gatewayCpuUs(dpop)}, R1 ${gatewayCpuUs(bearer)}; ` +
      `system: R1 DPoP ${dpop.cpuUs.total}, R1 ${bearer.cpuUs.total}; redis commands per request: ` +
      `R1 DPoP ${dpop.roundTrips.redis}, R1 ${bearer.roundTrips.redis}`,
  );
  // The proofs are signed before the timed phase (bench/scenarios.ts); any signed during it are the load generator's.
  console.log(
    `DPoP proofs signed in the timed phase: ${dpop.preparedLate ?? 0} of ${dpop.requests} ` +
      '(the rest signed before it, each used once)',
  );
}

const pad = (v: unknown, n: number) => String(v).padStart(n);

export function printShape(r: ShapeResult): void {
  console.log(`\n== ${r.shape} (pg, redis: statements and commands per request)`);
  console.log(
    `${'id'.padEnd(6)}${'target'.padEnd(46)}${pad('req/s', 8)}${pad('p50', 8)}${pad('p99', 8)}${pad('p99.9', 8)}` +
      `${pad('CPU µs', 8)}${pad('pg', 6)}${pad('redis', 6)}  CPU µs per request by process`,
  );
  for (const m of r.measurements) {
    const { total, loader, ...perProcess } = m.cpuUs;
    const parts = Object.entries(perProcess)
      .filter(([, us]) => us > 0)
      .map(([name, us]) => `${name} ${us}`)
      .join(', ');
    const bad = Object.keys(m.unexpected).length ? `  UNEXPECTED ${JSON.stringify(m.unexpected)}` : '';
    console.log(
      `${m.id.padEnd(6)}${m.label.padEnd(46)}${pad(m.rps, 8)}${pad(m.p50, 8)}${pad(m.p99, 8)}${pad(m.p999, 8)}` +
        `${pad(total, 8)}${pad(m.roundTrips.postgres, 6)}${pad(m.roundTrips.redis, 6)}  ` +
        `${parts} (load generator ${loader})${bad}`,
    );
  }
  for (const [name, value] of Object.entries(r.ratios)) console.log(`${name.padEnd(22)} ${value.toFixed(2)}`);
  const a = r.addedLatencyMs;
  console.log(`added latency R1 − B1 at ${a.rate} req/s (half of R1's peak): p50 ${a.p50} ms, p99 ${a.p99} ms`);
  for (const warning of contradictions(r.measurements)) console.log(`CONTRADICTS ITSELF: ${warning}`);
}

/**
 * Measurements that cannot both be true of a steady machine: a fixed-rate run at half a target's peak answering slower
 * at p50 than the closed-loop run at its peak means the rate was not held (the machine was busy, or the loader fell
 * behind its schedule), so that run's latencies say little about the product.
 */
export function contradictions(ms: Measurement[]): string[] {
  return ms
    .filter((m) => m.id.endsWith('@½'))
    .flatMap((half) => {
      const peak = byId(ms, half.id.slice(0, -2));
      return peak && half.p50 > peak.p50
        ? [
            `${half.id} p50 ${half.p50} ms at half load is above ${peak.id}'s p50 ${peak.p50} ms at full load: ` +
              'the fixed rate was not held; measure again on a quieter machine',
          ]
        : [];
    });
}

export function writeResults(payload: Record<string, unknown>): string {
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${new Date().toISOString().replace(/[:.]/g, '-')}.json`, dir);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, loadavg: loadavg(), node: process.version },
        ...payload,
      },
      null,
      2,
    )}\n`,
  );
  return fileURLToPath(file);
}

/**
 * The sweep's chart beside the run's JSON (same name, .svg), and as results/sweep-latest.svg, the one
 * docs/performance.md shows. Returns the run's chart path.
 */
export function writeSweepChart(resultsFile: string, sweep: Measurement[], shape: string): string {
  const svg = sweepChartSvg(
    sweepPoints(sweep),
    `${shape} shape, ${cpus().length} CPUs, ${new Date().toISOString().slice(0, 16)}Z`,
  );
  const file = resultsFile.replace(/\.json$/, '.svg');
  writeFileSync(file, svg);
  writeFileSync(new URL('./results/sweep-latest.svg', import.meta.url), svg);
  return file;
}

const fixed = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
const errorsOf = (m: Measurement) => Object.values(m.unexpected).reduce((a, b) => a + b, 0);

/**
 * Issue 19's figures, one number per line so that a script can read them (`<name> <number>`), then each beside its
 * target. Latencies in ms; CPU from /proc of each process.
 */
export function printTargets(r: ShapeResult): void {
  const t = r.targets!;
  const m = (id: string) => byId([...r.measurements, ...t.sweep, t.b2Half], id)!;
  const [r1, b2] = [m('R1'), m('B2')];
  const r1At64 = m('R1 c=64');
  const figures: [name: string, value: number, target: string, met: (v: number) => boolean][] = [
    ['R1/B2', r1.rps / b2.rps, '≥ 0.5', (v) => v >= 0.5],
    ['CPU R1/B2', r1.cpuUs.total! / b2.cpuUs.total!, '≤ 2', (v) => v <= 2],
    ['decisions per PDP call @64', t.decisionsPerCall, '≥ 4', (v) => v >= 4],
    [
      'PDP CPU per decision batched/single @64',
      (r1At64.cpuUs.policies ?? NaN) / (t.pdpSingle.cpuUs.policies ?? NaN),
      '≤ 0.33',
      (v) => v <= 1 / 3,
    ],
    ['tail p99 R1/B2 @half', m('R1@½').p99 / t.b2Half.p99, '≤ 2', (v) => v <= 2],
    ['added p50 R1-B1 @half', r.addedLatencyMs.p50, '≤ 1 ms', (v) => v <= 1],
    ['T1/oidc-provider', r.ratios['T1/oidc-provider'] ?? NaN, '≥ 0.3', (v) => v >= 0.3],
  ];
  // Issue 33: what the PDP's facts in memory save, at 10 connections (one decision per R1 request).
  const r1At10 = m('R1 c=10');
  const at10: typeof figures = [
    ['PostgreSQL statements per R1 request', r1At10.roundTrips.postgres, '≤ 0.05', (v) => v <= 0.05],
    ['PDP CPU per decision @10', r1At10.cpuUs.policies ?? NaN, '≤ 120', (v) => v <= 120],
  ];
  // Issue 50: the gateway's and the backend's own CPU in the same measurement (µs of each process per R1 request).
  const ownCpu: typeof figures = [
    ['gateway CPU per R1 request @10', r1At10.cpuUs.gateway ?? NaN, '≤ 330', (v) => v <= 330],
    ['backend CPU per R1 request @10', r1At10.cpuUs.backend ?? NaN, '≤ 120', (v) => v <= 120],
  ];
  // Issue 48: PostgreSQL's CPU beside its statements (the same measurement; its process and its backends), and what
  // that makes of one PostgreSQL core: the API requests a second it carries (docs/operations.md, capacity model).
  const postgresUs = r1At10.cpuUs.postgres ?? NaN;
  console.log(`\n== issue 19 figures (${r.shape} shape)`);
  for (const [name, value] of [...figures, ...at10, ...ownCpu]) {
    console.log(`${name} ${fixed(value, /CPU per .* @10$/.test(name) ? 0 : /^(added|PostgreSQL)/.test(name) ? 2 : 3)}`);
    if (name === 'PostgreSQL statements per R1 request') {
      console.log(`PostgreSQL CPU per R1 request ${fixed(postgresUs, 0)}`);
      console.log(`API requests per second per PostgreSQL core ${fixed(1e6 / postgresUs, 0)}`);
    }
  }
  for (const s of t.sweep) {
    const [id, c] = s.id.split(' ');
    console.log(`sweep ${id} ${c} ${s.rps} req/s p50 ${s.p50} p99 ${s.p99} errors ${errorsOf(s)}`);
  }
  const sweepOf = (id: string, c: number) => m(`${id} c=${c}`);
  const sweepRatio = (c: number) => sweepOf('R1', c).rps / sweepOf('B2', c).rps;
  const issue33: typeof figures = [
    ['sweep R1/B2 c=10', sweepRatio(10), '≥ 0.5', (v) => v >= 0.5],
    ['sweep R1/B2 c=64', sweepRatio(64), '≥ 0.7', (v) => v >= 0.7],
    ...at10,
    ['added p50 R1-B1 @half', r.addedLatencyMs.p50, '≤ 1.5 ms', (v) => v <= 1.5],
    ['tail p99 R1/B2 @half', m('R1@½').p99 / t.b2Half.p99, '≤ 3', (v) => v <= 3],
    ['headline R1/B2 / sweep R1/B2 c=10', r1.rps / b2.rps / sweepRatio(10), '0.9–1.1', (v) => v >= 0.9 && v <= 1.1],
  ];
  const judge = (list: typeof figures) => {
    for (const [name, value, target, met] of list)
      console.log(
        `${name.padEnd(42)} ${fixed(value).padStart(8)}  target ${target.padEnd(7)} ` +
          `${Number.isFinite(value) ? (met(value) ? 'met' : 'NOT MET') : 'not measured'}`,
      );
  };
  console.log('\n== against the targets');
  judge(figures);
  const at256 = sweepOf('R1', 256);
  console.log(
    `${'sweep: no errors at 256 connections'.padEnd(42)} ` +
      `${String(errorsOf(at256) + errorsOf(sweepOf('B2', 256))).padStart(8)}  ` +
      `${errorsOf(at256) + errorsOf(sweepOf('B2', 256)) === 0 ? 'met' : 'NOT MET'}`,
  );
  console.log(
    `${'sweep: R1 c=256 / R1 c=10'.padEnd(42)} ${fixed(at256.rps / sweepOf('R1', 10).rps).padStart(8)}  ` +
      `target ≥ 1    ${at256.rps >= sweepOf('R1', 10).rps ? 'met' : 'NOT MET'}`,
  );
  console.log("\n== against issue 33's targets");
  judge(issue33);
  // Issue 50's targets were set on a machine whose bare node:http answered ~30,000 req/s: B0 says how this one compares.
  console.log(`\n== against issue 50's targets (Node ${process.versions.node}; B0 here ${m('B0')?.rps ?? '?'} req/s)`);
  judge([
    ...ownCpu,
    ['PDP CPU per decision @10', r1At10.cpuUs.policies ?? NaN, '≤ 200', (v) => v <= 200],
    ['sweep R1/B2 c=64', sweepRatio(64), '≥ 0.55', (v) => v >= 0.55],
  ]);
}
