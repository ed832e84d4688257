// `npm run bench`: the ratios the targets are stated in, the table on stdout, the JSON in bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { LoadResult } from './bench-loader.js';

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
}

const byId = (ms: Measurement[], id: string) => ms.find((m) => m.id === id);

/** The ratios of the issue, where both sides were measured. */
export function ratiosOf(ms: Measurement[]): Record<string, number> {
  const pairs = [['R1', 'B2'], ['R1', 'B1'], ['R2', 'B1'], ['W1', 'B1'], ['T1', 'T0']] as const;
  const out: Record<string, number> = {};
  for (const [a, b] of pairs) {
    const x = byId(ms, a);
    const y = byId(ms, b);
    if (x && y) out[`${a}/${b === 'T0' ? 'oidc-provider' : b}`] = Math.round((x.rps / y.rps) * 1000) / 1000;
  }
  return out;
}

const pad = (v: unknown, n: number) => String(v).padStart(n);

export function printShape(r: ShapeResult): void {
  console.log(`\n== ${r.shape} (pg, redis: statements and commands per request)`);
  console.log(`${'id'.padEnd(6)}${'target'.padEnd(46)}${pad('req/s', 8)}${pad('p50', 8)}${pad('p99', 8)}${pad('p99.9', 8)}${pad('CPU µs', 8)}${pad('pg', 6)}${pad('redis', 6)}  CPU µs per request by process`);
  for (const m of r.measurements) {
    const { total, loader, ...perProcess } = m.cpuUs;
    const parts = Object.entries(perProcess).filter(([, us]) => us > 0).map(([name, us]) => `${name} ${us}`).join(', ');
    const bad = Object.keys(m.unexpected).length ? `  UNEXPECTED ${JSON.stringify(m.unexpected)}` : '';
    console.log(`${m.id.padEnd(6)}${m.label.padEnd(46)}${pad(m.rps, 8)}${pad(m.p50, 8)}${pad(m.p99, 8)}${pad(m.p999, 8)}${pad(total, 8)}${pad(m.roundTrips.postgres, 6)}${pad(m.roundTrips.redis, 6)}  ${parts} (load generator ${loader})${bad}`);
  }
  for (const [name, value] of Object.entries(r.ratios)) console.log(`${name.padEnd(22)} ${value.toFixed(2)}`);
  const a = r.addedLatencyMs;
  console.log(`added latency R1 − B1 at ${a.rate} req/s (half of R1's peak): p50 ${a.p50} ms, p99 ${a.p99} ms`);
}

export function writeResults(payload: Record<string, unknown>): string {
  const dir = new URL('../../bench/results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${new Date().toISOString().replace(/[:.]/g, '-')}.json`, dir);
  writeFileSync(file, `${JSON.stringify({ machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, loadavg: loadavg(), node: process.version }, ...payload }, null, 2)}\n`);
  return file.pathname;
}
