// CPU time of processes from /proc/<pid>/stat (utime + stime, in clock ticks), so a run can say how many µs of CPU
// each process spent per request. PostgreSQL is a postmaster with one backend process per connection: its CPU is
// the postmaster's own and reaped children's plus every live child's.
import { execFileSync } from 'node:child_process';
import { childrenOf, statFields } from '../tests/support/processes.js';

const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** utime + stime (+ cutime + cstime of reaped children when asked), in µs. */
function processCpuUs(pid: number, withReapedChildren = false): number {
  const f = statFields(pid);
  if (!f) return 0;
  const ticks = Number(f[11]) + Number(f[12]) + (withReapedChildren ? Number(f[13]) + Number(f[14]) : 0);
  return ticks * TICK_US;
}

/** A process to measure: a single one, or a process tree (PostgreSQL). */
export interface Measured {
  name: string;
  pid: number;
  tree?: boolean;
}

const cpuOf = (m: Measured) =>
  m.tree
    ? processCpuUs(m.pid, true) + childrenOf(m.pid).reduce((sum, c) => sum + processCpuUs(c), 0)
    : processCpuUs(m.pid);

export type CpuSnapshot = Record<string, number>;

export const cpuSnapshot = (processes: Measured[]): CpuSnapshot =>
  Object.fromEntries(processes.map((m) => [m.name, cpuOf(m)]));

/** µs of CPU per request of each process between two snapshots, and their sum. */
export function cpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): Record<string, number> {
  const per: Record<string, number> = {};
  let total = 0;
  for (const name of Object.keys(before)) {
    const us = (after[name]! - before[name]!) / Math.max(1, requests);
    per[name] = Math.round(us);
    total += us;
  }
  return { ...per, total: Math.round(total) };
}
